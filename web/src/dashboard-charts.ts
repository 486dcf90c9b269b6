// The dashboard's candle chart: any pair and any interval the key's tier allows, from
// /v1/rates/historical with the customer's key; the synthetic price and the premium beside the
// candles where the tier includes them; the live rate from the key's stream (/v1/rates/stream).
import { call, errorText, type ApiFailure } from './api.js';
import { CandleChart, type Candle } from './charts.js';
import type { Account } from './account.js';
import { byId, el } from './dom.js';
import * as fmt from './format.js';
import { showFixings } from './dashboard-fixings.js';
import { intervalMs } from './intervals.js';
import { follow } from './sse.js';

const DAY_MS = 86_400_000;
/**
 * Days of candles drawn at an interval: a week's worth of hourly candles (168) or fewer, at least a
 * day, at most 29 days (a month of daily candles within Free's 30-day reach).
 */
const daysOf = (interval: string) => Math.min(29, Math.max(1, Math.floor((168 * (intervalMs(interval) ?? 3_600_000)) / DAY_MS)));

let chart: CandleChart | null = null;
let stopStream: (() => void) | null = null;
let loadSeq = 0;

export function stopCharts(): void {
  stopStream?.();
  stopStream = null;
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

async function draw(key: string, account: Account, pair: string, interval: string): Promise<void> {
  const seq = ++loadSeq;
  const note = byId('chart-note');
  note.textContent = 'Loading candles…';
  const builderPlus = account.account.tier !== 'free';
  const now = Date.now();
  const days = Math.min(daysOf(interval), (account.limits.history_days ?? 3660) - 1);
  const params = new URLSearchParams({ pair, interval, start: day(now - days * 86_400_000), end: day(now), limit: String(Math.min(account.limits.max_page, 2000)) });
  try {
    const res = await call<{ data: Candle[]; meta: { has_more: boolean } }>(`/v1/rates/historical?${params}`, { key });
    if (seq !== loadSeq) return; // a newer choice is loading
    chart ??= new CandleChart(byId('candles'));
    const { withSynthetic } = chart.show(res.data);
    byId('candles').dataset.candles = String(res.data.length);
    note.textContent = res.data.length === 0
      ? `No ${interval} candles for ${pair} in the last ${days} days.`
      : `${res.data.length} ${interval} candles over ${days} day${days === 1 ? '' : 's'} (UTC).` +
        (withSynthetic ? ' Blue line: the synthetic price; lower pane: the premium in percent.' : builderPlus ? ' No synthetic price in this range.' : ' The synthetic price and the premium are in the Builder tier and up.');
  } catch (err) {
    if (seq === loadSeq) note.textContent = `Candles unavailable: ${errorText(err)}`;
  }
  followLive(key, account, pair);
}

interface LiveRate {
  rate: number;
  status: string;
  data_quality: string;
  data_freshness_seconds: number;
  confidence?: number;
  synthetic_divergence_pct?: number | null;
  pricing?: { synthetic?: { price: number } };
}

function followLive(key: string, account: Account, pair: string): void {
  stopStream?.();
  const live = byId('live');
  live.replaceChildren(el('span', { class: 'muted' }, 'Waiting for the live rate…'));
  const builderPlus = account.account.tier !== 'free';
  const url = `/v1/rates/stream?pairs=${pair}${builderPlus ? '&include_synthetic=true' : ''}`;
  stopStream = follow({
    url,
    key,
    onEvent: (e) => {
      if (e.event !== 'rates') return;
      const r = (JSON.parse(e.data) as { data: Record<string, LiveRate> }).data[pair];
      if (!r) return;
      const quote = pair.slice(-3);
      const parts = [
        el('span', {}, 'Live ', el('strong', { 'data-live-rate': String(r.rate) }, `${fmt.rate(r.rate)} ${quote}`)),
        el('span', {}, 'Status ', el('span', { class: `badge ${r.status}` }, r.status)),
        el('span', {}, `Quality ${r.data_quality}, ${fmt.ago(r.data_freshness_seconds)}`),
      ];
      if (r.pricing?.synthetic) parts.push(el('span', {}, 'Synthetic ', el('strong', {}, `${fmt.rate(r.pricing.synthetic.price)} ${quote}`)));
      if (typeof r.synthetic_divergence_pct === 'number') parts.push(el('span', {}, 'Premium ', el('strong', {}, `${r.synthetic_divergence_pct}%`)));
      if (typeof r.confidence === 'number') parts.push(el('span', {}, `Confidence ${r.confidence}`));
      live.replaceChildren(...parts);
      chart?.live(r.rate);
    },
    onState: (state, err?: ApiFailure) => {
      if (state === 'refused') live.replaceChildren(el('span', { class: 'muted' }, `Live updates paused: ${err?.message ?? 'refused'}`));
    },
  });
}

/** Fills the pair and interval choices (pairs from the public board) and draws the first chart. */
export function startCharts(key: string, account: Account): void {
  const pairSelect = byId<HTMLSelectElement>('chart-pair');
  const intervalSelect = byId<HTMLSelectElement>('chart-interval');
  intervalSelect.replaceChildren(...account.limits.intervals.map((i) => el('option', { value: i }, i)));
  intervalSelect.value = account.limits.intervals.includes('1h') ? '1h' : account.limits.intervals[0] ?? '1h';
  const redraw = () => {
    void draw(key, account, pairSelect.value, intervalSelect.value);
    void showFixings(key, pairSelect.value);
  };
  pairSelect.onchange = redraw;
  intervalSelect.onchange = redraw;
  void call<{ data: Record<string, unknown> }>('/v1/board')
    .then((board) => {
      const pairs = Object.keys(board.data);
      pairSelect.replaceChildren(...pairs.map((p) => el('option', { value: p }, `${p.slice(0, -3)}/${p.slice(-3)}`)));
      pairSelect.value = pairs.includes('BTCNGN') ? 'BTCNGN' : pairs[0] ?? '';
      redraw();
    })
    .catch((err) => (byId('chart-note').textContent = `Pairs unavailable: ${errorText(err)}`));
}
