// The dashboard's webhooks section: the account's endpoints with their state (a disabled one says
// why), adding one (its signing secret shown once, with a copy button), sending a test event,
// rotating the secret, enabling a disabled endpoint again, deleting, and each endpoint's recent
// deliveries with their attempts. Builder tier and up; a Free key is told so.
import { call, errorText, ApiFailure } from './api.js';
import { byId, cell, copyText, el } from './dom.js';
import * as fmt from './format.js';

interface Endpoint {
  id: number;
  url: string;
  description: string | null;
  events: string[];
  divergence_pct: number;
  stale_seconds: number;
  secret_prefix: string;
  state: 'enabled' | 'disabled';
  disabled_reason: string | null;
  failing_since: string | null;
}
interface Listing {
  endpoints: Endpoint[];
  limits: { endpoints: number; events: string[] };
}
interface Delivery {
  id: number;
  event: { id: string; type: string; pair: string | null; created_at: string };
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  attempt_log: { attempt: number; at: string; duration_ms: number; status: number | null; error: string | null }[];
}

/** What each event means, as the form lists them. */
const EVENT_LABELS: Record<string, string> = {
  'pair.divergence': 'A pair diverging from its synthetic price beyond the threshold (and back)',
  'pair.stale': 'A pair without new data for longer than the limit (and fresh again)',
  'source.failing': 'A venue failing for a pair (and recovering)',
  restatement: 'A published number restated',
  'fixing.published': 'A fixing published',
  heartbeat: 'A heartbeat, hourly (proof the path works)',
};
const POLL_MS = 1_000;
const POLL_TIMES = 30;

let key: string | null = null;
let shown: number | null = null; // the endpoint whose deliveries are shown
let polling: ReturnType<typeof setTimeout> | undefined;

export async function showWebhooks(apiKey: string, tier: string): Promise<void> {
  key = apiKey;
  const paid = tier !== 'free';
  byId('webhooks-unavailable').hidden = paid;
  byId('webhooks-body').hidden = !paid;
  if (paid) await guarded(loadEndpoints);
}

/** Forgets everything of the signed-out account: the secret shown once above all. */
export function hideWebhooks(): void {
  key = null;
  shown = null;
  clearTimeout(polling);
  byId('webhook-secret').hidden = true;
  byId<HTMLInputElement>('webhook-secret-value').value = '';
  byId('webhook-secret-copied').textContent = '';
  byId('webhooks-error').textContent = '';
  byId<HTMLTableElement>('webhooks').tBodies[0]?.replaceChildren();
  byId('webhook-events').replaceChildren();
  byId('webhook-deliveries').hidden = true;
  byId<HTMLTableElement>('deliveries').tBodies[0]?.replaceChildren();
}

async function loadEndpoints(): Promise<void> {
  const listing = await call<Listing>('/v1/account/webhooks', { key });
  renderEventChoices(listing.limits.events);
  byId('webhooks-limit').textContent = `${listing.endpoints.length} of ${listing.limits.endpoints} endpoints this tier allows.`;
  const body = el('tbody');
  for (const e of listing.endpoints) {
    const action = (name: string, label: string, cls: string, run: () => Promise<void>) => {
      const b = el('button', { type: 'button', class: cls, 'data-action': name, 'aria-label': `${label}: ${e.url}` }, label);
      b.addEventListener('click', () => void guarded(run));
      return b;
    };
    const actions = [
      action('test', 'Send test', 'secondary', () => sendTest(e)),
      action('deliveries', 'Deliveries', 'secondary', () => showDeliveries(e.id)),
      action('rotate', 'Rotate secret', 'secondary', () => rotate(e)),
      e.state === 'disabled' ? action('enable', 'Enable', 'secondary', () => enable(e)) : null,
      action('delete', 'Delete', 'danger', () => remove(e)),
    ];
    const state =
      e.state === 'disabled'
        ? el('span', {}, el('span', { class: 'badge failed' }, 'disabled'), ' ', el('span', { class: 'small', 'data-reason': '' }, e.disabled_reason ?? ''))
        : el('span', {}, el('span', { class: 'badge ok' }, 'enabled'), e.failing_since ? el('span', { class: 'small muted' }, ` failing since ${fmt.when(e.failing_since)}`) : null);
    body.append(
      el(
        'tr',
        { 'data-endpoint-id': String(e.id), 'data-state': e.state },
        cell('Endpoint', el('span', { class: 'mono' }, e.url), e.description ? el('span', { class: 'muted small' }, ` (${e.description})`) : null, el('br'), el('span', { class: 'muted small' }, `secret ${e.secret_prefix}…`)),
        cell('Events', e.events.join(', ')),
        cell('State', state),
        cell('Actions', el('span', { class: 'key-row' }, ...actions)),
      ),
    );
  }
  byId<HTMLTableElement>('webhooks').tBodies[0]?.replaceWith(body);
}

function renderEventChoices(allowed: string[]): void {
  const box = byId('webhook-events');
  if (box.dataset.events === allowed.join(',')) return;
  box.dataset.events = allowed.join(',');
  box.replaceChildren(
    el('legend', {}, 'Events'),
    ...allowed.map((name) => {
      const id = `webhook-event-${name.replace('.', '-')}`;
      return el('div', { class: 'check' }, el('input', { type: 'checkbox', id, name: 'events', value: name }), ' ', el('label', { for: id }, el('span', { class: 'mono' }, name), ` – ${EVENT_LABELS[name] ?? name}`));
    }),
  );
}

function showSecret(title: string, secret: string): void {
  byId('webhook-secret-title').textContent = title;
  const field = byId<HTMLInputElement>('webhook-secret-value');
  field.value = secret;
  byId('webhook-secret-copied').textContent = '';
  byId('webhook-secret').hidden = false;
  field.focus();
  field.select();
}

async function create(form: HTMLFormElement): Promise<void> {
  const events = [...form.querySelectorAll<HTMLInputElement>('input[name=events]:checked')].map((i) => i.value);
  const body: Record<string, unknown> = { url: byId<HTMLInputElement>('webhook-url').value.trim(), events };
  const divergence = byId<HTMLInputElement>('webhook-divergence').value;
  const stale = byId<HTMLInputElement>('webhook-stale').value;
  if (divergence) body.divergence_pct = Number(divergence);
  if (stale) body.stale_seconds = Number(stale);
  const made = await call<{ endpoint: Endpoint; secret: string }>('/v1/account/webhooks', { key, method: 'POST', body });
  showSecret(`Signing secret of ${made.endpoint.url}, shown once:`, made.secret);
  form.reset();
  await loadEndpoints();
}

async function sendTest(e: Endpoint): Promise<void> {
  const sent = await call<{ event: { id: string } }>(`/v1/account/webhooks/${e.id}/test`, { key, method: 'POST' });
  await showDeliveries(e.id, POLL_TIMES, sent.event.id);
}

async function rotate(e: Endpoint): Promise<void> {
  if (!confirm(`Rotate the signing secret of ${e.url}? The new one is shown once; the old one still signs deliveries for 24 hours.`)) return;
  const made = await call<{ endpoint: Endpoint; secret: string }>(`/v1/account/webhooks/${e.id}/rotate-secret`, { key, method: 'POST' });
  showSecret(`New signing secret of ${e.url}, shown once:`, made.secret);
  await loadEndpoints();
}

async function enable(e: Endpoint): Promise<void> {
  await call(`/v1/account/webhooks/${e.id}`, { key, method: 'POST', body: { enabled: true } });
  await loadEndpoints();
}

async function remove(e: Endpoint): Promise<void> {
  if (!confirm(`Delete the webhook endpoint ${e.url} and its deliveries?`)) return;
  await call(`/v1/account/webhooks/${e.id}`, { key, method: 'DELETE' });
  if (shown === e.id) {
    shown = null;
    byId('webhook-deliveries').hidden = true;
  }
  await loadEndpoints();
}

function attemptText(a: Delivery['attempt_log'][number]): string {
  const outcome = a.error === null ? `HTTP ${a.status}` : a.error;
  return `#${a.attempt} ${fmt.when(a.at)}: ${outcome} (${fmt.duration(a.duration_ms)})`;
}

/**
 * Shows an endpoint's recent deliveries, and keeps them current for a while when some are still
 * pending or the event just sent (`awaited`) is not listed yet.
 */
async function showDeliveries(id: number, times = POLL_TIMES, awaited?: string): Promise<void> {
  clearTimeout(polling);
  shown = id;
  const { deliveries } = await call<{ deliveries: Delivery[] }>(`/v1/account/webhooks/${id}/deliveries?limit=20`, { key });
  if (shown !== id) return;
  const body = el('tbody');
  for (const d of deliveries) {
    body.append(
      el(
        'tr',
        { 'data-delivery-id': String(d.id), 'data-state': d.state, 'data-event-id': d.event.id },
        cell('Event', el('span', { class: 'mono' }, d.event.type), d.event.pair ? ` ${d.event.pair}` : '', el('br'), el('span', { class: 'muted small mono' }, d.event.id)),
        cell('Created', fmt.when(d.event.created_at)),
        cell('State', el('span', { class: `badge ${d.state === 'delivered' ? 'ok' : d.state === 'failed' ? 'failed' : 'caution'}` }, d.state), d.state === 'pending' && d.next_attempt_at ? el('span', { class: 'small muted' }, ` next ${fmt.when(d.next_attempt_at)}`) : null),
        cell('Attempts', d.attempt_log.length ? el('ul', { class: 'attempts' }, ...d.attempt_log.map((a) => el('li', {}, attemptText(a)))) : 'none yet'),
      ),
    );
  }
  byId('deliveries-title').textContent = `Recent deliveries to endpoint #${id}`;
  byId<HTMLTableElement>('deliveries').tBodies[0]?.replaceWith(body);
  byId('webhook-deliveries').hidden = false;
  const waiting = deliveries.some((d) => d.state === 'pending') || (awaited !== undefined && !deliveries.some((d) => d.event.id === awaited));
  if (times > 1 && waiting) polling = setTimeout(() => void guarded(() => showDeliveries(id, times - 1, awaited)), POLL_MS);
}

/** Runs a webhook operation, showing its failure in the section (a signed-out key ends it quietly). */
async function guarded(op: () => Promise<void>): Promise<void> {
  const error = byId('webhooks-error');
  error.textContent = '';
  try {
    await op();
  } catch (err) {
    if (key === null || (err instanceof ApiFailure && err.status === 401)) return;
    error.textContent = errorText(err);
  }
}

export function startWebhookForms(): void {
  byId<HTMLFormElement>('new-webhook').addEventListener('submit', (event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    void guarded(() => create(form));
  });
  byId('webhook-secret-copy').addEventListener('click', () => void copyText(byId<HTMLInputElement>('webhook-secret-value').value, byId('webhook-secret-copied')));
}
