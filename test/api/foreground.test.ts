// Small requests before bulk work (lib/foreground.ts), through the real middleware over HTTP: a
// request whose handler is running holds bulk steps back; one that said the rest of its answer is
// bulk work, or whose client is still sending its body, does not.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppState } from '../../api/context.js';
import { readBody } from '../../api/middleware/body.js';
import { envelope } from '../../api/middleware/envelope.js';
import { inForeground } from '../../api/middleware/foreground.js';
import { RequestMetrics } from '../../api/middleware/metrics.js';
import { backgroundTurn } from '../../lib/foreground.js';
import { testLog } from '../support/db.js';
import { until } from '../support/wait.js';

let server: http.Server;
let port: number;
let entered = 0; // handlers that have started
let release = () => {};
let held = new Promise<void>((r) => (release = r));

beforeAll(async () => {
  const app = new Koa<AppState>();
  const router = new Router<AppState>();
  router.get('/answer', async (ctx) => {
    entered++;
    await held;
    ctx.body = { ok: true };
  });
  router.get('/bulk', async (ctx) => {
    ctx.state.leaveForeground();
    entered++;
    await held;
    ctx.body = { ok: true };
  });
  router.post('/body', async (ctx) => {
    entered++;
    await held;
    ctx.body = { got: ctx.request.body };
  });
  app.use(envelope({ metrics: new RequestMetrics(undefined as never, testLog), log: testLog, deadlineMs: 10_000, simulated: () => false }));
  app.use(readBody());
  app.use(inForeground());
  app.use(router.routes());
  server = http.createServer(app.callback());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  release();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

/** Whether a bulk step would go now (it resolves at once), rather than wait. */
async function bulkGoesNow(): Promise<boolean> {
  let done = false;
  void backgroundTurn().then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
}

function get(path: string): Promise<number> {
  return new Promise((resolve, reject) => http.get(`http://127.0.0.1:${port}${path}`, (res) => (res.resume(), resolve(res.statusCode ?? 0))).on('error', reject));
}

/** Handlers held from here until release(). */
function hold(): void {
  entered = 0;
  held = new Promise<void>((r) => (release = r));
}

/** GET `path`, once its handler runs (held): its status once released, in `answer`. */
async function asked(path: string): Promise<{ answer: Promise<number> }> {
  const answer = get(path);
  await until('the handler runs', () => entered === 1, 5_000, 5);
  return { answer };
}

describe('the foreground', () => {
  it('holds bulk steps while a request is being answered, and lets them go once it is', async () => {
    hold();
    const { answer } = await asked('/answer');
    expect(await bulkGoesNow()).toBe(false);
    release();
    expect(await answer).toBe(200);
    expect(await bulkGoesNow()).toBe(true);
  });

  it('lets bulk steps go while a request makes the rest of its answer as bulk work', async () => {
    hold();
    const { answer } = await asked('/bulk');
    expect(await bulkGoesNow()).toBe(true);
    release();
    expect(await answer).toBe(200);
  });

  it('lets bulk steps go while a client is still sending its body, and holds them once it has arrived', async () => {
    hold();
    const body = '{"label":"slowly sent"}';
    const socket = net.connect(port, '127.0.0.1');
    let reply = '';
    socket.on('data', (d) => (reply += d.toString()));
    await new Promise<void>((r) => socket.once('connect', () => r()));
    const arrived = new Promise((r) => server.once('request', r)); // its headers read, its body not yet whole
    socket.write(`POST /body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
    await arrived;
    await new Promise((r) => setImmediate(r)); // the middleware up to the body's reading has run
    expect(await bulkGoesNow()).toBe(true);
    socket.write(body.slice(5));
    await until('the handler runs', () => entered === 1, 5_000, 5);
    expect(await bulkGoesNow()).toBe(false);
    release();
    await until('the answer', () => reply.includes('slowly sent'), 5_000, 5);
    socket.destroy();
  });
});
