// A pair no venue trades (the KES pairs) is priced from BASE/USDT x USD/KES. FX is collected once
// an hour, so its newest observation is up to an hour old (more when a fetch is late) by design.
// Counted in the rate's age, it took these pairs out of live, markets and pairs at the end of
// every FX hour; their age is their crypto leg's, and FX answers for itself (fx_stale).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 3 });
});
afterAll(async () => {
  await t?.close();
});

/** The KES history as it stands when the last hourly FX fetch was `seconds` ago. */
async function lastFxFetch(seconds: number, sourceUpdatedHoursAgo = 0) {
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 - seconds * 1000);
  await t.db.sql`DELETE FROM fx_rates WHERE currency = 'KES' AND time > ${new Date(at.getTime() - 3_600_000)}`;
  const updated = new Date(at.getTime() - sourceUpdatedHoursAgo * 3_600_000);
  await t.db.sql`
    INSERT INTO fx_rates (time, currency, units_per_usd, source, source_updated_at)
    VALUES (${at}, 'KES', 129.3, 'coinbase', ${updated}), (${at}, 'KES', 129.4, 'exchangerate_api', ${updated})`;
  await t.api.deps.snapshot.refresh();
}

describe('a synthetic-only pair', () => {
  it('stays live while its FX hour runs late, as old as its crypto leg', async () => {
    await lastFxFetch(3_601); // the hourly fetch a second late; BTCUSDT traded within the minute
    const live = await t.get('/v1/rates/live?pairs=BTCKES', t.keys.builder);
    expect(live.status).toBe(200);
    const kes = live.body.data.BTCKES;
    expect(kes.calculation).toBe('synthetic');
    expect(kes.data_quality).toBe('low'); // synthetic only, not stale
    expect(kes.data_freshness_seconds).toBeLessThan(600);
    expect(kes.flags).not.toContain('fx_stale');
    const markets = await t.get('/v1/rates/markets', t.keys.builder);
    expect(Object.keys(markets.body.data)).toContain('BTCKES');
    const pairs = await t.get('/v1/pairs', t.keys.builder);
    expect(pairs.body.pairs.find((p: { pair: string }) => p.pair === 'BTCKES').availability.live).toBe(true);
    // and status counts it fresh: its age is the crypto leg's, not the FX hour's
    const status = await t.get('/v1/status', t.keys.builder);
    expect(status.body.pairs.BTCKES.age_seconds).toBeLessThan(600);
  });

  it('says fx_stale when no FX source has updated within 36 hours', async () => {
    await lastFxFetch(60, 40);
    const live = await t.get('/v1/rates/live?pairs=BTCKES', t.keys.builder);
    expect(live.status).toBe(200);
    expect(live.body.data.BTCKES.flags).toContain('fx_stale');
  });
});
