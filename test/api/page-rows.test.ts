// A page's rows are read as their record text and split by the client (api/queries/candles.ts,
// parsePageRow): each field exactly as its own column would be read (numbers as their numeric
// text, NULL as null, venues a number, settled a boolean), a quoted field by PostgreSQL's rule,
// and a row of any other shape refused rather than misread. The database's own text of real rows
// against their columns is checked in test/api/export.test.ts and the candle page tests.
import { describe, expect, it } from 'vitest';
import { parsePageRow } from '../../api/queries/candles.js';

describe('parsePageRow', () => {
  it('reads every column, NULLs as null', () => {
    expect(parsePageRow('(2026-10-20T00:00:00+00:00,143040206.65,143040206.65,140545559.38,140603129.17,100967334.1897654820,0.71418334,,,1530.0239000000000000,0,,,,f)')).toEqual({
      t: '2026-10-20T00:00:00+00:00',
      open: '143040206.65',
      high: '143040206.65',
      low: '140545559.38',
      close: '140603129.17',
      pv: '100967334.1897654820',
      volume: '0.71418334',
      usd_pv: null,
      usd_volume: null,
      units_per_usd: '1530.0239000000000000',
      venues: 0,
      venue_min: null,
      venue_max: null,
      venue_mean: null,
      settled: false,
    });
    const r = parsePageRow('(2026-10-20T00:05:00+00:00,1,2,0.5,-1,2,3,76842.36,0.85,1,2,0.5,2,1.250000000000000000,t)');
    expect([r.close, r.venues, r.venue_mean, r.settled]).toEqual(['-1', 2, '1.250000000000000000', true]);
  });

  it('reads a quoted field by the rule (a doubled quote, a backslash)', () => {
    const r = parsePageRow('("a ""b"" \\\\c, (d)",1,2,3,4,5,6,7,8,9,1,10,11,12,t)');
    expect(r.t).toBe('a "b" \\c, (d)');
    expect([r.open, r.venue_mean, r.settled]).toEqual(['1', '12', true]);
  });

  it('refuses a row of another shape', () => {
    expect(() => parsePageRow('(2026-10-20T00:00:00+00:00,1,2)')).toThrow(/not a record of 15 fields/);
    expect(() => parsePageRow('2026-10-20T00:00:00+00:00,1,2,3,4,5,6,7,8,9,1,10,11,12,t')).toThrow(/not a record of 15 fields/);
  });
});
