// When the database goes away: 503 service_unavailable with Retry-After (no internals), health
// says so, and live rates keep coming from memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import net from 'node:net';
import { createPool } from '../../lib/db/connect.js';
import { toApiError } from '../../api/errors.js';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 1 });
});
afterAll(async () => {
  await t?.close().catch(() => {});
});

describe('database unreachable', () => {
  it('answers 503 with Retry-After, reports it in health, and still serves live rates', async () => {
    const key = await t.key('builder');
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', key)).status).toBe(200); // key now cached
    await t.db.sql.end();
    const res = await t.get('/v1/rates/eod?pair=BTCNGN&date=2026-11-01', key);
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'service_unavailable', message: expect.any(String), status: 503 });
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.stringify(res.body)).not.toMatch(/127\.0\.0\.1|CONNECTION|postgres/i);

    const health = await t.get('/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'degraded', services: { database: 'error' } });

    const live = await t.get('/v1/rates/live?pairs=BTCNGN', key); // the snapshot is in memory
    expect(live.status).toBe(200);
  });
});

describe('a request that takes too long', () => {
  it('is answered 503 with Retry-After within the deadline, and the service goes on', async () => {
    // a deadline a loaded machine still meets for a quick request, far below the held statement
    const slow = await startTestApi({ hours: 1, env: { API_DEADLINE_MS: '1000' } });
    try {
      const key = await slow.key('enterprise');
      expect((await slow.get('/v1/pairs', key)).status).toBe(200); // the key is known now
      // every connection of the pool busy with something long (on the embedded database, its one
      // connection, as during a big refresh)
      const held = await Promise.all(Array.from({ length: slow.db.kind === 'embedded' ? 1 : 10 }, () => slow.db.sql.reserve()));
      const busy = held.map((c) => c`SELECT pg_sleep(6)`.execute().catch(() => 'cancelled'));
      const start = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      const started = Date.now();
      const res = await slow.get(`/v1/rates/historical?pair=BTCNGN&interval=5m&start=${start}&end=${start}`, key);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: 'service_unavailable', status: 503 });
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(Date.now() - started).toBeLessThan(4_000); // the deadline, not the statement's 6 s
      expect((await slow.get('/v1/rates/live?pairs=BTCNGN', key)).status).toBe(200); // from memory, at once
      await Promise.all(busy);
      for (const c of held) c.release();
      expect((await slow.get('/v1/pairs', key)).status).toBe(200);
    } finally {
      await slow.close();
    }
  });

  it('whose body is still arriving at the deadline gets one 408 and its connection closed, not a 503 and then an unasked-for 408', async () => {
    // a client uploading slowly: headers, a part of the body, then nothing for longer than the
    // deadline. Before, the deadline answered 503 "retry shortly" (the wait was the client's) and
    // left the connection open, so Node's request timeout wrote a second, unrequested 408 on it.
    const slow = await startTestApi({ hours: 1, env: { API_DEADLINE_MS: '1000' } });
    try {
      const key = await slow.key('builder');
      const { port } = new URL(slow.api.url);
      const started = Date.now();
      const answer = await new Promise<{ text: string; closedAfterMs: number }>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1', () =>
          socket.write(`POST /v1/account/keys HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"label":`),
        );
        let text = '';
        socket.on('data', (d) => (text += d.toString()));
        socket.on('close', () => resolve({ text, closedAfterMs: Date.now() - started }));
        socket.on('error', reject);
      });
      const statuses = [...answer.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      expect(statuses).toEqual([408]);
      expect(answer.text).toMatch(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'request_timeout', message: expect.any(String), status: 408 });
      expect(answer.closedAfterMs).toBeLessThan(5_000); // closed with the answer, not at Node's 30 s
      expect((await slow.get('/v1/account/keys', key)).body.keys).toHaveLength(1); // no key was made
    } finally {
      await slow.close();
    }
  }, 20_000);

  it.runIf(Boolean(process.env.TEST_DATABASE_URL))('is cancelled by the server after STATEMENT_TIMEOUT_MS, which the API answers 503', async () => {
    // 250 ms: the connection's own first query (postgres.js reads the array types) must fit in it
    const pool = createPool(t.db.url, 1, 250);
    try {
      const err = await pool`SELECT pg_sleep(1)`.catch((e: unknown) => e);
      expect((err as { code?: string }).code).toBe('57014');
      const answer = toApiError(err);
      expect([answer.status, answer.code, answer.headers['Retry-After']]).toEqual([503, 'service_unavailable', expect.stringMatching(/^\d+$/)]);
    } finally {
      await pool.end();
    }
  });
});
