// When fixings are taken: 16:00 on the quote currency's home clock (an IANA zone, not an offset)
// and 00:00 UTC, each over the hour before; dated by the fixing zone's own calendar day.
import { describe, expect, it } from 'vitest';
import { fixingId, fixingSlot, fixingSlotsBetween, zonedInstant } from '../../../lib/methodology/fixings.js';

describe('fixing times', () => {
  it('are 16:00 on each home clock: Lagos +1, Johannesburg +2, Nairobi and Kampala +3, Accra +0', () => {
    const expected: Record<string, [string, string]> = {
      NGN: ['2026-11-24T15:00:00.000Z', '2026-11-24T16:00:00+01:00'],
      ZAR: ['2026-11-24T14:00:00.000Z', '2026-11-24T16:00:00+02:00'],
      KES: ['2026-11-24T13:00:00.000Z', '2026-11-24T16:00:00+03:00'],
      UGX: ['2026-11-24T13:00:00.000Z', '2026-11-24T16:00:00+03:00'],
      GHS: ['2026-11-24T16:00:00.000Z', '2026-11-24T16:00:00+00:00'],
    };
    for (const [quote, [utc, local]] of Object.entries(expected)) {
      const slot = fixingSlot('local', quote, '2026-11-24');
      expect([slot.time.toISOString(), slot.localTime], quote).toEqual([utc, local]);
      expect(slot.windowStart.getTime(), quote).toBe(slot.time.getTime() - 3_600_000);
    }
  });

  it('read the zone, not a fixed offset: a zone with daylight saving moves the instant', () => {
    // Europe/London is +0 in winter, +1 in summer: the same wall time is another instant
    expect(zonedInstant('Europe/London', '2026-01-15', '16:00').toISOString()).toBe('2026-01-15T16:00:00.000Z');
    expect(zonedInstant('Europe/London', '2026-07-15', '16:00').toISOString()).toBe('2026-07-15T15:00:00.000Z');
    // the African zones have no daylight saving: one offset all year
    expect(zonedInstant('Africa/Nairobi', '2026-01-15', '16:00').toISOString()).toBe('2026-01-15T13:00:00.000Z');
    expect(zonedInstant('Africa/Nairobi', '2026-07-15', '16:00').toISOString()).toBe('2026-07-15T13:00:00.000Z');
  });

  it('date the 00:00 UTC fixing by its own day, its hour the last of the day before', () => {
    const slot = fixingSlot('utc', 'KES', '2026-11-25');
    expect(slot.time.toISOString()).toBe('2026-11-25T00:00:00.000Z');
    expect(slot.windowStart.toISOString()).toBe('2026-11-24T23:00:00.000Z');
    expect(slot.localTime).toBe('2026-11-25T00:00:00+00:00');
    expect(fixingId('BTCKES', slot)).toBe('FIX-BTCKES-20261125T000000Z');
  });

  it('lists every fixing between two instants once, oldest first, across a day boundary', () => {
    const slots = fixingSlotsBetween('KES', new Date('2026-11-24T12:00:00Z'), new Date('2026-11-26T00:00:00Z'));
    expect(slots.map((s) => `${s.kind} ${s.date} ${s.time.toISOString()}`)).toEqual([
      'local 2026-11-24 2026-11-24T13:00:00.000Z',
      'utc 2026-11-25 2026-11-25T00:00:00.000Z',
      'local 2026-11-25 2026-11-25T13:00:00.000Z',
      'utc 2026-11-26 2026-11-26T00:00:00.000Z',
    ]);
    // (from, to]: an instant at `from` is not listed, one at `to` is
    expect(fixingSlotsBetween('GHS', new Date('2026-11-24T16:00:00Z'), new Date('2026-11-25T00:00:00Z')).map((s) => s.kind)).toEqual(['utc']);
  });
});
