// The status page: overall status, uptime, per-pair freshness and sources (no prices) and the
// collector's recent cycles, from the public GET /v1/status/public, refreshed every minute while
// the page is visible (the contract's advice for status polling).
import './style.css';
import { call, errorText } from './api.js';
import { byId, cell, el } from './dom.js';
import * as fmt from './format.js';
import { intervalWords } from './intervals.js';

interface PublicStatus {
  overall_status: 'healthy' | 'degraded' | 'outage';
  timestamp: string;
  pairs: Record<string, { last_update: string | null; age_seconds: number | null; fresh: boolean; sources_active: string[]; sources_quiet?: string[]; sources_failing: string[] }>;
  cycles: { started_at: string; finished_at: string; duration_ms: number; ok: boolean; sources_ok: string[]; sources_failed: string[]; trades: number }[];
  uptime: { h24: number | null; d7: number | null };
  transparency: { tree_size: number; root_hash: string; timestamp: string } | null;
  restatements: { pair: string; subject: string; time: string; previous: number; restated: number; change_pct: number; reason: { late_trades: { exchange: string; trades: number }[] }; restated_at: string }[];
}

/** What a restatement's subject restated: a fixing, or a candle of an interval (candle_<interval>; the daily one is the EOD snapshot). */
function subjectText(subject: string): string {
  const candle = /^candle_(.+)$/.exec(subject);
  if (!candle) return subject;
  const words = intervalWords(candle[1]!);
  return `${words} candle${words === 'daily' ? ' (EOD)' : ''}`;
}

const WORDS = { healthy: 'All pairs fresh, every source delivering', degraded: 'Degraded: some pairs stale or some sources failing', outage: 'Outage: no pair has fresh data' } as const;

function render(s: PublicStatus): void {
  byId('overall').replaceChildren(el('span', { class: `badge ${s.overall_status}` }, s.overall_status), ` ${WORDS[s.overall_status]}`);
  byId('uptime').replaceChildren(
    el('div', {}, el('dt', {}, 'Collector uptime, 24 hours'), el('dd', {}, fmt.percent(s.uptime.h24))),
    el('div', {}, el('dt', {}, 'Collector uptime, 7 days'), el('dd', {}, fmt.percent(s.uptime.d7))),
    el('div', {}, el('dt', {}, 'Checked'), el('dd', {}, fmt.when(s.timestamp))),
    el(
      'div',
      { id: 'log-head' },
      el('dt', {}, 'Transparency log'),
      el('dd', {}, s.transparency ? `${fmt.count(s.transparency.tree_size)} entries, head signed ${fmt.when(s.transparency.timestamp)}, root ${s.transparency.root_hash.slice(0, 16)}…` : 'no signed head yet'),
    ),
  );
  const pairs = el('tbody');
  for (const [pair, p] of Object.entries(s.pairs)) {
    pairs.append(
      el(
        'tr',
        { 'data-pair': pair },
        cell('Pair', el('strong', {}, `${pair.slice(0, -3)}/${pair.slice(-3)}`)),
        cell('State', el('span', { class: `badge ${p.fresh ? 'ok' : p.last_update ? 'degraded' : 'none'}` }, p.fresh ? 'fresh' : p.last_update ? 'stale' : 'no data')),
        cell('Newest data', p.age_seconds === null ? '–' : fmt.ago(p.age_seconds)),
        // a quiet venue answers but has had no trade in the pair for 15 minutes: listed with the active, marked
        cell('Active sources', [...p.sources_active, ...(p.sources_quiet ?? []).map((v) => `${v} (quiet)`)].join(', ') || '–'),
        cell('Failing sources', p.sources_failing.join(', ') || 'none'),
      ),
    );
  }
  byId<HTMLTableElement>('pairs').tBodies[0]?.replaceWith(pairs);
  const cycles = el('tbody');
  for (const c of s.cycles) {
    cycles.append(
      el(
        'tr',
        {},
        cell('Finished', fmt.when(c.finished_at)),
        cell('Result', el('span', { class: `badge ${c.ok ? 'ok' : 'failed'}` }, c.ok ? 'delivered' : 'failed')),
        cell('Took', fmt.duration(c.duration_ms)),
        cell('Trades', fmt.count(c.trades)),
        cell('Sources', [...c.sources_ok, ...c.sources_failed.map((f) => `${f} (failed)`)].join(', ') || '–'),
      ),
    );
  }
  if (s.cycles.length === 0) cycles.append(el('tr', {}, cell('Finished', 'No cycle recorded yet.')));
  byId<HTMLTableElement>('cycles').tBodies[0]?.replaceWith(cycles);
  const restated = el('tbody');
  for (const r of s.restatements) {
    restated.append(
      el(
        'tr',
        { 'data-restatement': `${r.pair}|${r.subject}|${r.time}` },
        cell('Restated', fmt.when(r.restated_at)),
        cell('Pair', el('strong', {}, `${r.pair.slice(0, -3)}/${r.pair.slice(-3)}`)),
        cell('Value', `${subjectText(r.subject)}, ${fmt.when(r.time)}`),
        cell('Before', String(r.previous)),
        cell('After', String(r.restated)),
        cell('Change', `${r.change_pct > 0 ? '+' : ''}${r.change_pct}%`),
        cell('Late trades', r.reason.late_trades.map((l) => `${l.exchange} ${l.trades}`).join(', ') || '–'),
      ),
    );
  }
  if (s.restatements.length === 0) restated.append(el('tr', {}, cell('Restated', 'None in the last 7 days.')));
  byId<HTMLTableElement>('restatements').tBodies[0]?.replaceWith(restated);
}

async function refresh(): Promise<void> {
  try {
    render(await call<PublicStatus>('/v1/status/public'));
  } catch (err) {
    byId('overall').textContent = `Status unavailable: ${errorText(err)}`;
  }
}

void refresh();
setInterval(() => {
  if (document.visibilityState === 'visible') void refresh();
}, 60_000);
