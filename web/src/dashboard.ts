// The dashboard: sign in with an API key (kept in sessionStorage), see the plan, limits and usage,
// manage the account's keys and webhooks (web/src/dashboard-webhooks.ts), and chart any pair with
// the key's own tier.
import './style.css';
import { call, errorText, ApiFailure } from './api.js';
import { checkMarket } from './simulated.js';
import { byId, cell, copyText, el } from './dom.js';
import * as fmt from './format.js';
import { forgetKey, keepKey, KEY_PATTERN, sessionKey } from './session.js';
import { startCharts, stopCharts } from './dashboard-charts.js';
import { hideWebhooks, showWebhooks, startWebhookForms } from './dashboard-webhooks.js';
import type { Account, OwnKey } from './account.js';
import { UsageChart } from './charts.js';

interface NewKey {
  api_key: string;
  key: OwnKey;
  replaced?: OwnKey;
}

let key: string | null = null;
let usageChart: UsageChart | null = null;

function fact(term: string, value: string): HTMLElement {
  return el('div', {}, el('dt', {}, term), el('dd', {}, value));
}

function showSignIn(message = ''): void {
  stopCharts();
  hideWebhooks();
  // nothing of the account signed out stays in the page for whoever signs in next on this tab:
  // not the key shown once, not the last answer
  byId('issued').hidden = true;
  byId<HTMLInputElement>('issued-key').value = '';
  byId('issued-title').textContent = '';
  byId('issued-copied').textContent = '';
  const tried = byId('try-result');
  tried.hidden = true;
  tried.textContent = '';
  byId('keys-error').textContent = '';
  byId<HTMLTableElement>('keys').tBodies[0]?.replaceChildren();
  byId('account').hidden = true;
  byId('signin').hidden = false;
  byId('signin-error').textContent = message;
}

async function signIn(candidate: string): Promise<void> {
  const error = byId('signin-error');
  if (!KEY_PATTERN.test(candidate)) {
    error.textContent = 'That is not an afrates key: it starts with afr_live_ and has 32 letters and digits after it.';
    return;
  }
  key = candidate;
  try {
    const account = await loadAccount();
    keepKey(candidate);
    byId('signin').hidden = true;
    byId('account').hidden = false;
    renderAccount(account);
    await loadKeys();
    startCharts(candidate, account);
    void showWebhooks(candidate, account.account.tier);
  } catch (err) {
    key = null;
    forgetKey();
    showSignIn(err instanceof ApiFailure && err.status === 401 ? 'This key is invalid or revoked.' : errorText(err));
  }
}

async function loadAccount(): Promise<Account> {
  return call<Account>('/v1/account', { key });
}

function renderAccount(a: Account): void {
  const tier = a.account.tier;
  byId('plan').replaceChildren(
    fact('Tier', tier.charAt(0).toUpperCase() + tier.slice(1)),
    fact('Account', a.account.name ?? a.account.email ?? `#${a.account.id}`),
    fact('Signed in with', `${a.key.prefix}…${a.key.label ? ` (${a.key.label})` : ''}`),
    fact('Requests per minute', fmt.count(a.limits.per_minute)),
    fact('Requests per month', a.limits.per_month === null ? 'unlimited' : fmt.count(a.limits.per_month)),
    fact('Intervals', a.limits.intervals.join(', ')),
    fact('History', a.limits.history_days === null ? 'full' : `last ${a.limits.history_days} days`),
    fact('Open streams per key', String(a.limits.streams_per_key)),
  );
  const minute = a.usage.minute;
  const month = a.usage.month;
  const minuteBar = byId<HTMLProgressElement>('minute-bar');
  minuteBar.max = minute.limit;
  minuteBar.value = Math.min(minute.used, minute.limit);
  byId('minute-text').textContent = `${fmt.count(minute.used)} of ${fmt.count(minute.limit)} (resets ${fmt.when(minute.resets_at).slice(11)})`;
  byId('minute-text').dataset.used = String(minute.used);
  const monthBar = byId<HTMLProgressElement>('month-bar');
  monthBar.max = month.limit ?? Math.max(1, month.used);
  monthBar.value = month.limit === null ? 0 : Math.min(month.used, month.limit);
  byId('month-text').textContent = `${fmt.count(month.used)} of ${month.limit === null ? 'unlimited' : fmt.count(month.limit)} (renews ${fmt.when(month.resets_at).slice(0, 10)})`;
  byId('month-text').dataset.used = String(month.used);
  usageChart ??= new UsageChart(byId('usage-chart'));
  usageChart.show(a.usage.daily);
}

async function loadKeys(): Promise<void> {
  const { keys } = await call<{ keys: OwnKey[] }>('/v1/account/keys', { key });
  const body = el('tbody');
  for (const k of keys) {
    const rotate = el('button', { type: 'button', class: 'secondary', 'data-action': 'rotate', 'aria-label': `Rotate key ${k.prefix}` }, 'Rotate');
    const revoke = el('button', { type: 'button', class: 'danger', 'data-action': 'revoke', 'aria-label': `Revoke key ${k.prefix}` }, 'Revoke');
    rotate.addEventListener('click', () => void rotateKey(k));
    revoke.addEventListener('click', () => void revokeKey(k));
    body.append(
      el(
        'tr',
        { 'data-key-id': String(k.id) },
        cell('Key', el('span', { class: 'mono' }, `${k.prefix}…`), k.current ? el('span', { class: 'muted' }, ' (this session)') : null),
        cell('Label', k.label ?? '–'),
        cell('Created', fmt.when(k.created_at)),
        cell('Last used', k.current ? 'now' : fmt.when(k.last_used_at)),
        cell('Actions', el('span', { class: 'key-row' }, rotate, revoke)),
      ),
    );
  }
  byId<HTMLTableElement>('keys').tBodies[0]?.replaceWith(body);
}

function showIssued(title: string, apiKey: string): void {
  byId('issued-title').textContent = title;
  const field = byId<HTMLInputElement>('issued-key');
  field.value = apiKey;
  byId('issued-copied').textContent = '';
  byId('issued').hidden = false;
  field.focus();
  field.select();
}

async function createKey(label: string): Promise<void> {
  const issued = await call<NewKey>('/v1/account/keys', { key, method: 'POST', body: label ? { label } : {} });
  showIssued(`New key${issued.key.label ? ` “${issued.key.label}”` : ''}, shown once:`, issued.api_key);
  await loadKeys();
}

async function rotateKey(k: OwnKey): Promise<void> {
  if (!confirm(`Rotate ${k.prefix}…? It is refused from now on; its replacement is shown once.`)) return;
  await guarded(async () => {
    const issued = await call<NewKey>(`/v1/account/keys/${k.id}/rotate`, { key, method: 'POST' });
    // shown first: the old key is refused already, and this is the only time the new one is seen
    // (a reload below that fails must not take it away)
    showIssued(`Replacement of ${k.prefix}…, shown once:`, issued.api_key);
    if (k.current) {
      // this session's own key: carry on with its replacement
      key = issued.api_key;
      keepKey(issued.api_key);
      stopCharts();
      const account = await loadAccount();
      renderAccount(account); // it names the key in use: the replacement now
      startCharts(issued.api_key, account);
      void showWebhooks(issued.api_key, account.account.tier);
    }
    await loadKeys();
  });
}

async function revokeKey(k: OwnKey): Promise<void> {
  if (!confirm(`Revoke ${k.prefix}…? Requests with it are refused from now on.`)) return;
  await guarded(async () => {
    await call(`/v1/account/keys/${k.id}`, { key, method: 'DELETE' });
    if (k.current) {
      forgetKey();
      key = null;
      showSignIn('This session’s key was revoked: sign in with another key.');
      return;
    }
    await loadKeys();
  });
}

/** Runs a key operation, showing its failure beside the keys (a revoked session signs out). */
async function guarded(op: () => Promise<void>): Promise<void> {
  const error = byId('keys-error');
  error.textContent = '';
  try {
    await op();
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 401) {
      forgetKey();
      showSignIn('This key is no longer valid: sign in again.');
    } else error.textContent = errorText(err);
  }
}

function start(): void {
  byId<HTMLFormElement>('signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const field = byId<HTMLInputElement>('signin-key');
    const candidate = field.value.trim();
    field.value = '';
    void signIn(candidate);
  });
  byId('signout').addEventListener('click', () => {
    forgetKey();
    key = null;
    showSignIn();
  });
  byId<HTMLFormElement>('new-key').addEventListener('submit', (event) => {
    event.preventDefault();
    const label = byId<HTMLInputElement>('new-key-label');
    void guarded(async () => {
      await createKey(label.value.trim());
      label.value = '';
    });
  });
  startWebhookForms();
  byId('issued-copy').addEventListener('click', () => void copyText(byId<HTMLInputElement>('issued-key').value, byId('issued-copied')));
  byId('try-call').addEventListener('click', async () => {
    const out = byId('try-result');
    out.hidden = false;
    try {
      const body = await call('/v1/rates/live?pairs=BTCNGN', { key });
      out.textContent = JSON.stringify(body, null, 2);
    } catch (err) {
      out.textContent = errorText(err);
    }
    // the usage figures as the limiter counts them now (this request and the call above included)
    await guarded(async () => renderAccount(await loadAccount()));
  });

  const saved = sessionKey();
  if (saved) void signIn(saved);
  else showSignIn();
  void checkMarket(); // signed out, the page asks nothing else of the API
}

start();
