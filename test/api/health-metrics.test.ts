// GET /v1/health's metrics are the service's last 24 hours, not the answering process's: a restart
// (a deploy, a crash loop) set them to 0, so a service failing every few minutes reported an
// error_rate of 0, and with several API processes each reported its own share.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { openTestDatabase } from '../support/db.js';

let db: Database;
const running: TestApi[] = [];

beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  for (const t of running) await t.close();
  await db?.close();
});

async function api(): Promise<TestApi> {
  const t = await startTestApi({ db });
  running.push(t);
  return t;
}

describe('health metrics', () => {
  it('keep the last 24 hours across a restart, and count every API process', async () => {
    const first = await api();
    for (let i = 0; i < 20; i++) expect((await first.get('/v1/pairs', first.keys.builder)).status).toBe(200);
    first.api.deps.metrics.record(40, 503); // and one answer that failed
    await first.close();
    running.splice(running.indexOf(first), 1);

    const second = await api();
    const after = (await second.get('/v1/health')).body.metrics;
    expect(after.requests_24h).toBe(21);
    expect(after.error_rate).toBeCloseTo(1 / 21, 4);
    expect(after.avg_latency_ms).toBeGreaterThan(0);

    // a second process beside it: its answers reach the first one's health within seconds
    const third = await api();
    for (let i = 0; i < 5; i++) expect((await third.get('/v1/pairs', third.keys.builder)).status).toBe(200);
    await expect
      .poll(async () => (await second.get('/v1/health')).body.metrics.requests_24h, { timeout: 10_000, interval: 500 })
      .toBe(26);
  }, 60_000);
});
