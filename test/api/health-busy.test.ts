// Health while the database is only busy: a reading the database does not answer within its 2 s,
// because every connection is working on something long (on the embedded database its one
// connection, as during a big refresh), says `busy`, not `error`, and keeps the collector as last
// read; once the work is done health says `ok` again. A database that is gone is still `error`
// (test/api/unavailable.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 1 });
});
afterAll(async () => {
  await t?.close();
});

describe('health while the database is busy', () => {
  it('says busy, not error, while every connection runs a long statement, and ok once it ends', async () => {
    expect((await t.get('/v1/health')).body).toMatchObject({ status: 'ok', services: { database: 'ok', data_collector: 'ok' } });
    await t.healthReadingExpired();

    const held = await Promise.all(Array.from({ length: t.db.kind === 'embedded' ? 1 : 10 }, () => t.db.sql.reserve()));
    const statements = held.map((c) => c`SELECT pg_sleep(6)`.execute());
    try {
      const busy = await t.get('/v1/health');
      expect(busy.status).toBe(200);
      // degraded (answers may be slow meanwhile), but nothing has failed: the collector's last
      // reading stands, since its cycles are recorded in the same database
      expect(busy.body).toMatchObject({ status: 'degraded', services: { database: 'busy', data_collector: 'ok', fx_updates: 'ok' } });
      expect(busy.body.data_freshness.crypto_prices_age_seconds).toEqual(expect.any(Number));
    } finally {
      await Promise.all(statements);
      for (const c of held) c.release();
    }
    await t.healthReadingExpired();
    expect((await t.get('/v1/health')).body).toMatchObject({ status: 'ok', services: { database: 'ok' } });
  });
});
