// Stopping the API while a keep-alive connection (a load balancer's) has a request in flight: the
// request is answered, and the server stops within seconds, not after the 65 s keep-alive.
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestApi } from '../support/api.js';

describe('stopping the API', () => {
  it('answers a request in flight on a keep-alive connection, then closes it within seconds', async () => {
    const t = await startTestApi({ hours: 1 });
    const { port } = new URL(t.api.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let answered = '';
    socket.on('data', (d) => (answered += d.toString()));
    const closedAt = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    await new Promise((r) => socket.once('connect', r));
    socket.write(`GET /v1/rates/historical?pair=BTCNGN&start=2026-01-01&end=2026-12-31&interval=5m HTTP/1.1\r\nHost: x\r\nX-API-Key: ${t.keys.enterprise}\r\n\r\n`);
    const started = Date.now();
    await new Promise((r) => setImmediate(r));
    await t.close(); // keeps the connection busy while the server closes
    const stoppedIn = Date.now() - started;
    expect(answered).toMatch(/^HTTP\/1\.1 200 /);
    expect(stoppedIn).toBeLessThan(8_000);
    expect((await closedAt) - started).toBeLessThan(8_000);
  }, 30_000);
});
