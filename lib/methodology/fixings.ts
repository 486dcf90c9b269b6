// When the daily fixings are taken (docs/methodology.md, "Fixings"): for each pair one at
// fixing_local_time in its quote currency's home zone (an IANA zone, never a fixed offset) and one
// at fixing_utc_time; each is the certified rate of the fixing_window_minutes before its time.
import { param, QUOTE_ZONES } from './parameters.js';

export type FixingKind = 'local' | 'utc';
export const FIXING_KINDS: readonly FixingKind[] = ['local', 'utc'];

export interface FixingSlot {
  readonly kind: FixingKind;
  /** the calendar day of the fixing in its zone, YYYY-MM-DD */
  readonly date: string;
  readonly zone: string;
  /** the fixing instant: the window's end */
  readonly time: Date;
  readonly windowStart: Date;
  /** the fixing time as the zone's wall clock says it, ISO 8601 with its offset (2026-11-24T16:00:00+01:00) */
  readonly localTime: string;
}

const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();
function wallClock(zone: string, at: Date): { date: string; ms: number } {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(zone, f);
  }
  const p = Object.fromEntries(f.formatToParts(at).map((x) => [x.type, x.value]));
  const date = `${p.year}-${p.month}-${p.day}`;
  return { date, ms: Date.parse(`${date}T${p.hour}:${p.minute}:${p.second}Z`) };
}

/** The zone's offset from UTC at an instant, in ms (+1 h for Africa/Lagos). */
export const zoneOffsetMs = (zone: string, at: Date): number => wallClock(zone, at).ms - Math.floor(at.getTime() / 1000) * 1000;

/** The instant the zone's clocks show `hhmm` on `date`. */
export function zonedInstant(zone: string, date: string, hhmm: string): Date {
  const wall = Date.parse(`${date}T${hhmm}:00Z`);
  let at = wall - zoneOffsetMs(zone, new Date(wall));
  at = wall - zoneOffsetMs(zone, new Date(at)); // once more, should the offset differ at the instant itself
  return new Date(at);
}

function offsetText(ms: number): string {
  const m = Math.round(Math.abs(ms) / 60_000);
  return `${ms < 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

export function fixingSlot(kind: FixingKind, quote: string, date: string): FixingSlot {
  const zone = kind === 'local' ? QUOTE_ZONES[quote] : 'UTC';
  if (!zone) throw new RangeError(`no home zone for ${quote}`);
  const time = zonedInstant(zone, date, kind === 'local' ? param('fixing_local_time') : param('fixing_utc_time'));
  const offset = zoneOffsetMs(zone, time);
  const wall = new Date(time.getTime() + offset).toISOString().slice(0, 19);
  return { kind, date, zone, time, windowStart: new Date(time.getTime() - param('fixing_window_minutes') * 60_000), localTime: `${wall}${offsetText(offset)}` };
}

/** Every fixing of a pair whose time lies in (from, to], oldest first. */
export function fixingSlotsBetween(quote: string, from: Date, to: Date): FixingSlot[] {
  const out: FixingSlot[] = [];
  for (let day = Math.floor(from.getTime() / DAY_MS) * DAY_MS - DAY_MS; day <= to.getTime() + DAY_MS; day += DAY_MS) {
    const date = new Date(day).toISOString().slice(0, 10);
    for (const kind of FIXING_KINDS) {
      const slot = fixingSlot(kind, quote, date);
      if (slot.time > from && slot.time <= to) out.push(slot);
    }
  }
  return out.sort((a, b) => a.time.getTime() - b.time.getTime());
}

/** A fixing's id: FIX-<pair>-<its UTC instant, YYYYMMDDTHHMMSSZ>. */
export const fixingId = (pair: string, slot: Pick<FixingSlot, 'time'>) => `FIX-${pair}-${slot.time.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')}`;
