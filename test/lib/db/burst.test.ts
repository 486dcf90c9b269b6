// Issue 7: bursts of requests, some making the database raise errors, killed the embedded database
// (3 times out of 3 within four bursts). Here: bursts through the real API over HTTP on sockets
// opened at once, some half-closed right after sending, while failing and valid queries go through
// the same single pooled connection; afterwards the database still answers, and answers the same.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../support/api.js';

const BURSTS = 5;
const SOCKETS = 30;
const FAILING = 30;

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 3 });
});
afterAll(async () => {
  await t?.close();
});

/** One raw HTTP/1.1 request on its own socket; the status line, or '' if closed without one. */
function rawGet(path: string, key: string, halfClose: boolean): Promise<string> {
  const { hostname, port } = new URL(t.api.url);
  return new Promise((resolve) => {
    let data = '';
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nX-API-Key: ${key}\r\nConnection: close\r\n\r\n`);
      if (halfClose) socket.end(); // the client is done sending; it may still read
    });
    socket.setTimeout(30_000, () => socket.destroy());
    socket.on('data', (d) => (data += d.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve(data.split('\r\n')[0] ?? ''));
  });
}

describe('the embedded database under bursts of failing and valid queries', () => {
  it('survives them all and then answers as before', async () => {
    const key = t.keys.enterprise;
    // four customers, so the 30 requests at once stay within each one's share in flight (lib/tiers.ts: Enterprise 8)
    const keys = [key, await t.key('enterprise'), await t.key('enterprise'), await t.key('enterprise')];
    const from = t.start.toISOString().slice(0, 10);
    const to = new Date().toISOString().slice(0, 10);
    const page = `/v1/rates/historical?pair=BTCNGN&start=${from}&end=${to}&interval=5m&limit=500`;
    const paths = [page, '/v1/rates/historical?pair=BTCZAR&start=' + from + '&end=' + to + '&interval=1h', '/v1/pairs', '/v1/rates/live?pairs=BTCNGN,BTCZAR', '/v1/rates/markets'];
    const connectionsBefore = t.db.embedded ? (await t.db.embedded.stats()).connections : 0;
    const before = await t.get(page, key);
    expect(before.status).toBe(200);
    expect(before.body.data.length).toBeGreaterThan(10);

    for (let burst = 0; burst < BURSTS; burst++) {
      // errors raised inside PostgreSQL, on the API's own pool (one connection), mixed with its requests
      const failing = Array.from({ length: FAILING }, (_, i) =>
        i % 3 === 0
          ? t.db.sql`SELECT 1 / ${0}::int AS x`
          : i % 3 === 1
            ? t.db.sql`SELECT ${'294277-01-01'}::text::timestamptz AS x`
            : t.db.sql`SELECT ${i}::int AS i`,
      );
      const http = Array.from({ length: SOCKETS }, (_, i) => rawGet(paths[i % paths.length]!, keys[i % keys.length]!, i % 3 === 0));
      const [queries, statuses] = await Promise.all([Promise.allSettled(failing), Promise.all(http)]);
      queries.forEach((r, i) => {
        if (i % 3 === 2) expect(r).toEqual({ status: 'fulfilled', value: [{ i }] });
        else expect(r.status === 'rejected' && (r.reason as { code?: string }).code).toBe(i % 3 === 0 ? '22012' : '22008');
      });
      statuses.forEach((status, i) => {
        // a half-closed socket may be closed by the HTTP server before its answer; any answer is a 200
        if (i % 3 === 0) expect(['', 'HTTP/1.1 200 OK']).toContain(status);
        else expect(status).toBe('HTTP/1.1 200 OK');
      });
    }

    const after = await t.get(page, key);
    expect(after.status).toBe(200);
    expect(after.body.data).toEqual(before.body.data);
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', key)).status).toBe(200);
    if (t.db.embedded) {
      // the pool's one connection was never dropped and reopened
      expect((await t.db.embedded.stats()).connections).toBe(connectionsBefore);
    }
  });
});
