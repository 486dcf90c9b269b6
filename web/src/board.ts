// The home page: the live board of every pair (public GET /v1/board for the first paint, then the
// public board stream after every refresh), and the free-key form.
import './style.css';
import { call, errorText, type ApiFailure } from './api.js';
import { byId, cell, copyText, el } from './dom.js';
import * as fmt from './format.js';
import { keepKey } from './session.js';
import { follow } from './sse.js';

interface LiveRate {
  rate: number;
  calculation: 'vwap' | 'synthetic';
  data_freshness_seconds: number;
  sources: { exchange: string }[];
  status: 'verified' | 'caution' | 'unverified';
  data_quality: string;
}
interface Board {
  data: Record<string, LiveRate | null>;
  meta: { timestamp: string; snapshot: number; thresholds: Record<string, { verified: number; caution: number }> };
}

const table = byId<HTMLTableElement>('board');
const state = byId('board-state');
/** When the shown board was produced, to age its freshness figures on the client. */
let shownAt = Date.now();
let shown: Board | null = null;

/** The premium as the band its status stands for (free-tier fields: never the exact figure). */
function premiumBand(r: LiveRate, quote: string, thresholds: Board['meta']['thresholds']): string {
  if (r.calculation === 'synthetic') return 'synthetic only';
  const t = thresholds[quote] ?? thresholds.default ?? { verified: 2, caution: 5 };
  if (r.status === 'verified') return `within ±${t.verified}%`;
  if (r.status === 'caution') return `±${t.verified}–${t.caution}%`;
  return `beyond ±${t.caution}% or unchecked`;
}

function freshness(r: LiveRate): string {
  return fmt.ago(r.data_freshness_seconds + (Date.now() - shownAt) / 1000);
}

function render(board: Board): void {
  const before = shown;
  shown = board;
  shownAt = Date.now();
  const body = el('tbody');
  for (const [pair, r] of Object.entries(board.data)) {
    const quote = pair.slice(-3);
    const changed = before && JSON.stringify(before.data[pair]?.rate) !== JSON.stringify(r?.rate);
    const row = el(
      'tr',
      { 'data-pair': pair, class: changed ? 'flash' : undefined },
      cell('Pair', el('strong', {}, `${pair.slice(0, -3)}/${quote}`)),
      cell('Rate', r ? `${fmt.rate(r.rate)} ${quote}` : 'no data'),
      cell('Check against synthetic', el('span', { class: `badge ${r?.status ?? 'none'}` }, r?.status ?? 'no data')),
      cell('Premium vs synthetic', r ? premiumBand(r, quote, board.meta.thresholds) : '–'),
      cell('Quality', r?.data_quality ?? '–'),
      cell('Updated', el('span', { class: 'age' }, r ? freshness(r) : '–')),
    );
    row.querySelectorAll('td')[1]?.classList.add('num');
    body.append(row);
  }
  table.tBodies[0]?.replaceWith(body);
  table.dataset.snapshot = String(board.meta.snapshot);
  state.textContent = `Updated ${fmt.when(board.meta.timestamp)}`;
  if (!before) performance.mark('board-painted'); // the first paint, measured by bench/web.bench.ts
}

function ageRows(): void {
  if (!shown) return;
  for (const row of table.tBodies[0]?.rows ?? []) {
    const r = shown.data[row.dataset.pair ?? ''];
    const age = row.querySelector('.age');
    if (r && age) age.textContent = freshness(r);
  }
}

async function startBoard(): Promise<void> {
  try {
    render(await call<Board>('/v1/board'));
  } catch (err) {
    state.textContent = `The board is unavailable: ${errorText(err)}`;
  }
  follow({
    url: '/v1/board/stream',
    onEvent: (e) => {
      if (e.event === 'board') render(JSON.parse(e.data) as Board);
    },
    onState: (s, err?: ApiFailure) => {
      if (s === 'refused') state.textContent = `Live updates paused: ${err?.message ?? 'refused'}`;
    },
  });
  setInterval(ageRows, 5_000);
}

function startFreeKeyForm(): void {
  const form = byId<HTMLFormElement>('free-key');
  const error = byId('fk-error');
  const result = byId('fk-result');
  const keyField = byId<HTMLInputElement>('fk-key');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.textContent = '';
    const email = byId<HTMLInputElement>('fk-email').value.trim();
    const name = byId<HTMLInputElement>('fk-name').value.trim();
    if (!email.includes('@')) {
      error.textContent = 'Enter your email address.';
      return;
    }
    const button = form.querySelector('button');
    if (button) button.disabled = true;
    try {
      const issued = await call<{ api_key: string }>('/v1/auth/free-key', { method: 'POST', body: name ? { email, customer_name: name } : { email } });
      keyField.value = issued.api_key;
      result.hidden = false;
      form.hidden = true;
      keyField.focus();
      keyField.select();
    } catch (err) {
      error.textContent = errorText(err);
    } finally {
      if (button) button.disabled = false;
    }
  });
  byId('fk-copy').addEventListener('click', () => void copyText(keyField.value, byId('fk-copied')));
  byId('fk-dashboard').addEventListener('click', () => keepKey(keyField.value));
}

void startBoard();
startFreeKeyForm();
