// The dashboard's daily fixings: the chosen pair's fixings of the last 30 days (GET /v1/fixings),
// drawn as two lines (the fixing on the quote currency's home clock, the UTC one; their times as the
// API gives them) and listed newest first with what the key's tier sees of each.
import { call, errorText } from './api.js';
import { FixingChart } from './charts.js';
import { byId, cell, el } from './dom.js';
import * as fmt from './format.js';

interface Fixing {
  fixing_id: string;
  date: string;
  kind: 'local' | 'utc';
  zone: string;
  time: string;
  local_time: string;
  rate: number | null;
  status: string;
  data_quality: string;
  restated: boolean;
  confidence?: number | null;
  notes?: string;
}

const DAYS = 30;
let chart: FixingChart | null = null;
let loadSeq = 0;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** "16:00 Lagos", "00:00 UTC": the fixing's time on its own clock, as the API gives it. */
export const fixingName = (f: Pick<Fixing, 'kind' | 'zone' | 'local_time'>) => `${f.local_time.slice(11, 16)} ${f.kind === 'local' ? f.zone.replace('Africa/', '') : 'UTC'}`;

export async function showFixings(key: string, pair: string): Promise<void> {
  const seq = ++loadSeq;
  const note = byId('fixings-note');
  note.textContent = 'Loading fixings…';
  const now = Date.now();
  const params = new URLSearchParams({ pair, start: day(now - (DAYS - 1) * 86_400_000), end: day(now) });
  try {
    const res = await call<{ fixings: Fixing[] }>(`/v1/fixings?${params}`, { key });
    if (seq !== loadSeq) return; // a newer choice is loading
    chart ??= new FixingChart(byId('fixings-chart'));
    chart.show(res.fixings, fixingName);
    const rows = el('tbody');
    const newest = [...res.fixings].sort((a, b) => Date.parse(b.time) - Date.parse(a.time));
    for (const f of newest.slice(0, 14)) {
      rows.append(
        el(
          'tr',
          { 'data-fixing': f.fixing_id },
          cell('Day', f.date),
          cell('Fixing', fixingName(f)),
          cell('Rate', f.rate === null ? el('span', { class: 'muted' }, 'no trade') : fmt.rate(f.rate)),
          cell('Status', el('span', { class: `badge ${f.status}` }, f.status)),
          cell('Quality', f.data_quality + (typeof f.confidence === 'number' ? `, confidence ${f.confidence}` : '')),
          cell('Restated', f.restated ? el('a', { href: '/status#restatements' }, 'restated') : '–'),
        ),
      );
    }
    if (res.fixings.length === 0) rows.append(el('tr', {}, cell('Day', `No fixing of ${pair} in the last ${DAYS} days yet.`)));
    byId<HTMLTableElement>('fixings').tBodies[0]?.replaceWith(rows);
    byId('fixings-chart').dataset.fixings = String(res.fixings.length);
    note.textContent = `${res.fixings.length} fixings of ${pair} over ${DAYS} days. A fixing is published once its hour has settled and never changes; a later material change is a restatement.`;
  } catch (err) {
    if (seq === loadSeq) note.textContent = `Fixings unavailable: ${errorText(err)}`;
  }
}
