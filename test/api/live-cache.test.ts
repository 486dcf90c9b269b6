// The fast path of live and markets (JSON made once per pair, presentation and second) answers
// exactly what presenting each snapshot entry at that second gives, for every tier and flag; and a
// new second or a new snapshot is never answered from the old one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LiveJsonCache } from '../../api/live/cache.js';
import { assess, presentLive } from '../../api/live/present.js';
import { TIERS } from '../../api/tiers.js';
import { isLive } from '../../api/verification.js';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 3 });
});
afterAll(async () => {
  await t?.close();
});

describe('the live JSON cache', () => {
  it('gives what presenting each entry at that second gives, for every tier and flag', () => {
    const { snapshot, signer } = t.api.deps;
    const cache = new LiveJsonCache(snapshot, signer);
    const now = Date.now();
    const second = LiveJsonCache.moment(now);
    let compared = 0;
    for (const tier of TIERS) {
      for (const flags of [0, 1, 2, 3, 4, 7]) {
        const p = { tier, includeSynthetic: Boolean(flags & 1), includeSources: Boolean(flags & 2), includeAudit: Boolean(flags & 4), market: 'real' as const };
        for (const entry of snapshot.all()) {
          const fast = cache.rate(entry.pair, p, now)!;
          expect(fast.json).toBe(JSON.stringify(presentLive(entry, { ...p, now: second, signer })));
          expect(fast.assessment).toEqual(assess(entry, second));
          compared++;
        }
      }
      const markets = cache.marketsData(tier, now, (a) => isLive(a.ageSeconds));
      const slow = Object.fromEntries(
        snapshot.all().filter((e) => isLive(assess(e, second).ageSeconds)).map((e) => [e.pair, presentLive(e, { tier, now: second, signer })]),
      );
      expect(JSON.parse(markets.json)).toEqual(slow);
      expect(markets.count).toBe(Object.keys(slow).length);
    }
    expect(compared).toBeGreaterThan(100);
  });

  it('starts afresh each second and after each snapshot refresh', async () => {
    const { snapshot, signer } = t.api.deps;
    const cache = new LiveJsonCache(snapshot, signer);
    const now = Date.now();
    const first = cache.rate('BTCNGN', { tier: 'builder' }, now)!;
    expect(cache.rate('BTCNGN', { tier: 'builder' }, now)).toBe(first); // the same second: reused
    const later = cache.rate('BTCNGN', { tier: 'builder' }, now + 5_000)!;
    expect(later.assessment.ageSeconds).toBe(first.assessment.ageSeconds + 5);
    await snapshot.refresh();
    expect(cache.rate('BTCNGN', { tier: 'builder' }, now + 5_000)).not.toBe(later);
  });
});
