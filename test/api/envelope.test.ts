// The envelope every answer passes through (api/middleware/envelope.ts), on a real Koa server over
// HTTP: deadlines kept per request while many are in flight at once, and an answer that cannot be
// serialised still leaves in the contract's error shape.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../api/context.js';
import { envelope } from '../../api/middleware/envelope.js';
import { RequestMetrics } from '../../api/middleware/metrics.js';
import { testLog } from '../support/db.js';

const DEADLINE_MS = 500;
let server: http.Server;
let base: string;
const reported: unknown[] = []; // what the app's 'error' event carries to the log (api/app.ts)
let release = () => {}; // ends the slow handlers, after the tests
const released = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  const app = new Koa<AppState>();
  const router = new Router<AppState>();
  router.get('/slow', async (ctx) => {
    await released; // far past any deadline
    ctx.body = { late: true };
  });
  router.get('/fast', async (ctx) => {
    await new Promise((r) => setTimeout(r, 5)); // a little work: many are in flight at once
    ctx.body = { ok: true };
  });
  router.get('/unserialisable', async (ctx) => {
    ctx.body = { n: 1n };
  });
  app.on('error', (err: unknown) => reported.push(err));
  // never flushed here (no database): only the envelope is under test
  app.use(envelope({ metrics: new RequestMetrics(undefined as never, testLog), log: testLog, deadlineMs: DEADLINE_MS, simulated: () => false }));
  app.use(router.routes());
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  release();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

async function timed(path: string): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null; at: number }> {
  const res = await fetch(base + path);
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, retryAfter: res.headers.get('retry-after'), at: performance.now() };
}

describe('the envelope', () => {
  it('keeps each request to its own deadline while many others come and go at once', async () => {
    const t0 = performance.now();
    const first = timed('/slow');
    const fast: Promise<Awaited<ReturnType<typeof timed>>>[] = [];
    for (let i = 0; i < 30; i++) fast.push(timed('/fast'));
    await new Promise((r) => setTimeout(r, 250)); // the clock is what is tested: a deadline counted per request
    const second = timed('/slow'); // started half a deadline later
    for (let i = 0; i < 30; i++) fast.push(timed('/fast'));
    const [a, b, ...quick] = await Promise.all([first, second, ...fast]);
    for (const q of quick) expect(q.status).toBe(200);
    for (const slow of [a!, b!]) {
      expect(slow.status).toBe(503);
      expect(slow.body).toEqual({ error: 'service_unavailable', message: expect.any(String), status: 503 });
      expect(slow.retryAfter).toMatch(/^\d+$/);
    }
    // each at its own deadline (plus the sweep's 100 ms and a loaded machine's slack), not when the handler ends
    expect(a!.at - t0).toBeGreaterThanOrEqual(DEADLINE_MS);
    expect(a!.at - t0).toBeLessThan(2_500);
    expect(b!.at - t0).toBeGreaterThanOrEqual(250 + DEADLINE_MS);
    expect(b!.at).toBeGreaterThan(a!.at);
  });

  it('answers a body that cannot be serialised as a 500 in the error shape, with its request id', async () => {
    const res = await fetch(`${base}/unserialisable`);
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await res.json();
    expect(body).toEqual({ error: expect.any(String), message: expect.any(String), status: 500 });
    expect(JSON.stringify(body)).not.toMatch(/BigInt|TypeError|at .*\.ts/);
    expect(reported.map((e) => (e as Error).message)).toEqual([expect.stringContaining('BigInt')]); // for the operator, in the log
  });
});
