// Candle intervals as the API names them (GET /v1/account's limits.intervals, a restatement's
// candle_<interval>): their width as digits and a unit, m, h or d (lib/intervals.ts holds that
// rule for every interval it lists). The pages read an interval's width from its name.

const UNITS = { m: { ms: 60_000, word: 'minute' }, h: { ms: 3_600_000, word: 'hour' }, d: { ms: 86_400_000, word: 'day' } } as const;

function parse(name: string): { n: number; unit: (typeof UNITS)[keyof typeof UNITS] } | null {
  const m = /^(\d+)([mhd])$/.exec(name);
  return m ? { n: Number(m[1]), unit: UNITS[m[2] as keyof typeof UNITS] } : null;
}

/** An interval's width in milliseconds, or null for a name that is none. */
export function intervalMs(name: string): number | null {
  const p = parse(name);
  return p ? p.n * p.unit.ms : null;
}

/** An interval in words, as an adjective: 5-minute, 15-minute, hourly, daily. */
export function intervalWords(name: string): string {
  const p = parse(name);
  if (!p) return name;
  return p.n === 1 && p.unit.word !== 'minute' ? (p.unit.word === 'day' ? 'daily' : 'hourly') : `${p.n}-${p.unit.word}`;
}
