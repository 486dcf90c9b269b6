// Webhook delivery against real local HTTP receivers on the real embedded database: each delivery
// is signed so the receiver verifies it; a 500 or a timeout is retried with backoff, with the same
// event id (a receiver de-duplicates by it); a delivery under way when its process dies is made again
// by the next; an endpoint failing for 24 hours is disabled, saying why (clock injected); a name
// resolving to a loopback address at delivery time is refused without a connection; and a receiver
// that holds its request open delays neither another endpoint nor the next cycle.
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/connect.js';
import type { Lookup } from '../../../lib/webhooks/addresses.js';
import { emitEvent } from '../../../lib/webhooks/events.js';
import type { PairObservation } from '../../../lib/webhooks/observation.js';
import { createSecretBox } from '../../../lib/webhooks/secrets.js';
import { EVENT_ID_HEADER, SIGNATURE_HEADER, verifySignature } from '../../../lib/webhooks/signature.js';
import { detectAlerts } from '../../../pipeline/webhooks/alerts.js';
import { retryDelayMs, WebhookWorker, type WorkerOptions } from '../../../pipeline/webhooks/worker.js';
import { openTestDatabase, testLog } from '../../support/db.js';
import { addCustomer, addEndpoint, startReceiver, type Receiver } from '../../support/webhooks.js';

const HOUR = 3_600_000;
const box = createSecretBox({ keyHex: 'ab'.repeat(32), keyDir: '/nonexistent' });
let db: Database;
let customer: number;
const receivers: Receiver[] = [];
const workers: WebhookWorker[] = [];

beforeAll(async () => {
  db = await openTestDatabase();
  customer = await addCustomer(db.sql, 'enterprise');
});
afterAll(async () => {
  await db?.close();
});
beforeEach(async () => {
  await db.sql`DELETE FROM webhook_events`;
  await db.sql`DELETE FROM webhook_endpoints`;
  await db.sql`DELETE FROM webhook_alerts`;
});
afterEach(async () => {
  for (const r of receivers) r.release();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function receiver(answer?: Receiver['answer']): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

function worker(o: Partial<WorkerOptions> = {}): WebhookWorker {
  const w = new WebhookWorker({ sql: db.sql, log: testLog, secrets: box, allowPrivate: true, timeoutMs: 2_000, ...o });
  workers.push(w);
  return w;
}

const deliveryOf = async (endpoint: number) => {
  const [d] = await db.sql<{ id: string; state: string; attempts: number; next_attempt_at: Date | null }[]>`
    SELECT id, state, attempts, next_attempt_at FROM webhook_deliveries WHERE endpoint_id = ${endpoint} ORDER BY id LIMIT 1`;
  return d!;
};
const attemptsOf = (delivery: string) =>
  db.sql<{ attempt: number; status: number | null; error: string | null }[]>`SELECT attempt, status, error FROM webhook_attempts WHERE delivery_id = ${delivery} ORDER BY attempt`;
const endpointState = async (id: number) =>
  (await db.sql<{ enabled: boolean; disabled_reason: string | null; failing_since: Date | null }[]>`SELECT enabled, disabled_reason, failing_since FROM webhook_endpoints WHERE id = ${id}`)[0]!;

describe('a delivery', () => {
  it("is signed with the endpoint's own secret: the receiver verifies it, and another secret or body does not", async () => {
    const r = await receiver();
    const ep = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['source.failing'] });
    const other = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['pair.stale'] }); // not subscribed
    const id = await emitEvent(db.sql, { type: 'source.failing', pair: 'BTCNGN', data: { state: 'started', exchange: 'luno' } });
    await worker().runOnce();

    expect(r.received).toHaveLength(1);
    const got = r.received[0]!;
    expect(got.id).toBe(id);
    expect(got.headers[EVENT_ID_HEADER.toLowerCase()]).toBe(id);
    expect(JSON.parse(got.body)).toMatchObject({ id, type: 'source.failing', pair: 'BTCNGN', data: { state: 'started', exchange: 'luno' } });
    const signature = got.headers[SIGNATURE_HEADER.toLowerCase()] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifySignature(ep.secret, signature, got.body)).toBe(true);
    expect(verifySignature(other.secret, signature, got.body)).toBe(false);
    expect(verifySignature(ep.secret, signature, got.body.replace('luno', 'valr'))).toBe(false);
    expect(verifySignature(ep.secret, signature, got.body, { now: () => Date.now() + 3_600_000 })).toBe(false); // an old replay
    expect((await deliveryOf(ep.id)).state).toBe('delivered');
  });

  it('is retried after 500s with backoff, with the same event id and body, until delivered', async () => {
    let clock = Date.now();
    const r = await receiver((_req, nth) => (nth <= 2 ? 500 : 200));
    const ep = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['restatement'] });
    const id = await emitEvent(db.sql, { type: 'restatement', pair: 'BTCNGN', data: { bucket: '2026-11-20T10:05:00+00:00' }, at: new Date(clock) });
    const w = worker({ now: () => clock });

    await w.runOnce();
    expect(r.received).toHaveLength(1);
    const first = await deliveryOf(ep.id);
    expect(first).toMatchObject({ state: 'pending', attempts: 1 });
    expect(first.next_attempt_at!.getTime()).toBe(clock + retryDelayMs(1));
    expect((await endpointState(ep.id)).failing_since).not.toBeNull();

    await w.runOnce(); // not due yet: nothing sent
    expect(r.received).toHaveLength(1);
    clock += retryDelayMs(1);
    await w.runOnce();
    clock += retryDelayMs(2);
    await w.runOnce();

    expect(r.received.map((x) => x.id)).toEqual([id, id, id]);
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    expect(r.processed).toEqual(new Set([id]));
    const done = await deliveryOf(ep.id);
    expect(done).toMatchObject({ state: 'delivered', attempts: 3, next_attempt_at: null });
    expect((await attemptsOf(done.id)).map((a) => [a.status, a.error])).toEqual([[500, 'HTTP 500'], [500, 'HTTP 500'], [200, null]]);
    expect((await endpointState(ep.id)).failing_since).toBeNull();
  });

  it('is retried after a timeout; a receiver that answered too late gets it again and de-duplicates by id', async () => {
    let clock = Date.now();
    const r = await receiver((_req, nth) => (nth === 1 ? 'hang' : 200));
    const ep = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['fixing.published'] });
    const id = await emitEvent(db.sql, { type: 'fixing.published', data: { date: '2026-11-20' }, at: new Date(clock) });
    const w = worker({ now: () => clock, timeoutMs: 300 });

    await w.runOnce();
    expect(r.held).toBe(1); // still holding it: the worker gave up waiting
    const d = await deliveryOf(ep.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1 });
    expect((await attemptsOf(d.id))[0]).toMatchObject({ status: null, error: 'no answer within 0.3 s' });
    r.release(); // the receiver processes the first copy late

    clock += retryDelayMs(1);
    await w.runOnce();
    expect(r.received.map((x) => x.id)).toEqual([id, id]);
    expect(r.processed.size).toBe(1);
    expect(await deliveryOf(ep.id)).toMatchObject({ state: 'delivered', attempts: 2 });
  });

  it('under way when its process dies is made again, with the same id, by the next process once its lease ends', async () => {
    const r = await receiver((_req, nth) => (nth === 1 ? 'hang' : 200));
    const ep = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['restatement'] });
    const id = await emitEvent(db.sql, { type: 'restatement', data: {} });
    const first = worker({ timeoutMs: 30_000 });
    const dying = first.runOnce(); // never finishes while the receiver holds it: as good as dead
    await r.waitFor(1);

    const next = worker({ now: () => Date.now() + 3_600_000 }); // an hour on: past the lease
    await next.runOnce();
    expect(r.received.map((x) => x.id)).toEqual([id, id]);
    expect((await deliveryOf(ep.id)).state).toBe('delivered');
    r.release();
    await dying;
  });
  it('to an endpoint deleted while it was under way is dropped without an error, and the results beside it are recorded', async () => {
    const slow = await receiver(() => 'hang');
    const other = await receiver(() => 'hang');
    const gone = await addEndpoint(db.sql, box, customer, { url: slow.url, events: ['restatement'] });
    const kept = await addEndpoint(db.sql, box, customer, { url: other.url, events: ['restatement'] });
    await emitEvent(db.sql, { type: 'restatement', data: {} });
    const errors: string[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void errors.push(line) });
    const pass = worker({ timeoutMs: 30_000, log }).runOnce();
    await Promise.all([slow.waitFor(1), other.waitFor(1)]);
    await db.sql`DELETE FROM webhook_endpoints WHERE id = ${gone.id}`;
    slow.release();
    other.release(500);
    await pass;
    expect(errors).toEqual([]);
    const d = await deliveryOf(kept.id);
    expect(d).toMatchObject({ state: 'pending', attempts: 1 });
    expect((await attemptsOf(d.id)).map((a) => a.status)).toEqual([500]);
    expect((await endpointState(kept.id)).failing_since).not.toBeNull();
  });
});

describe('an endpoint', () => {
  it('whose every delivery fails for 24 hours is disabled, saying why, and gets nothing more', async () => {
    const t0 = Date.now();
    let clock = t0;
    const r = await receiver(() => 500);
    const ep = await addEndpoint(db.sql, box, customer, { url: r.url, events: ['heartbeat', 'restatement'], heartbeatSeconds: 4 * 3_600 }, new Date(t0));
    await emitEvent(db.sql, { type: 'restatement', data: {}, at: new Date(t0) });
    const w = worker({ now: () => clock });
    // each step: to the next moment something is due (a retry or a heartbeat)
    const nextDue = async () => {
      const [row] = await db.sql<{ at: Date | null }[]>`
        SELECT least((SELECT min(next_attempt_at) FROM webhook_deliveries WHERE state = 'pending'),
                     (SELECT heartbeat_due_at FROM webhook_endpoints WHERE id = ${ep.id} AND enabled)) AS at`;
      return row!.at?.getTime() ?? null;
    };
    let stateAt23h: boolean | undefined;
    for (let steps = 0; steps < 1_000; steps++) {
      await w.runOnce();
      if (!(await endpointState(ep.id)).enabled) break;
      const due = await nextDue();
      if (due === null) break;
      if (clock < t0 + 23 * HOUR && due >= t0 + 23 * HOUR) stateAt23h = (await endpointState(ep.id)).enabled;
      clock = Math.max(clock, due);
    }
    expect(stateAt23h).toBe(true); // still trying an hour before the day is out
    const state = await endpointState(ep.id);
    expect(state.enabled).toBe(false);
    expect(clock - t0).toBeGreaterThanOrEqual(24 * HOUR);
    expect(clock - t0).toBeLessThan(26 * HOUR);
    expect(state.disabled_reason).toMatch(/every delivery failed for 24 hours \(last: HTTP 500\)/);
    const count = r.received.length;
    expect(count).toBeGreaterThan(30); // the first event's retries (hourly at the end) and the heartbeats'

    // disabled: a new event is not delivered to it
    clock += HOUR;
    await emitEvent(db.sql, { type: 'restatement', data: {}, at: new Date(clock) });
    await w.runOnce();
    expect(r.received.length).toBe(count);
  });

  it('on a name that resolves to a loopback address at delivery time is refused there, without a connection', async () => {
    const r = await receiver();
    const calls: string[] = [];
    const rebinding: Lookup = async (host) => {
      calls.push(host);
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const ep = await addEndpoint(db.sql, box, customer, { url: `https://hooks.customer.example:${r.port}/hook`, events: ['restatement'] });
    await emitEvent(db.sql, { type: 'restatement', data: {} });
    await worker({ allowPrivate: false, lookup: rebinding }).runOnce();

    expect(r.received).toHaveLength(0);
    expect(calls).toEqual(['hooks.customer.example']);
    const d = await deliveryOf(ep.id);
    expect((await attemptsOf(d.id))[0]!.error).toMatch(/refused: .*hooks\.customer\.example resolves to 127\.0\.0\.1, a loopback address/);
  });

  it.each([
    ['::127.0.0.1', /IPv4-compatible for 127\.0\.0\.1, a loopback address/],
    ['::ffff:0:7f00:1', /IPv4-translated for 127\.0\.0\.1, a loopback address/],
    ['2002:7f00:1::', /6to4 for 127\.0\.0\.1, a loopback address/],
    ['2002:a9fe:a9fe::1', /6to4 for 169\.254\.169\.254, a link-local address/],
    ['64:ff9b::7f00:1', /NAT64 for 127\.0\.0\.1, a loopback address/],
    ['64:ff9b:1::7f00:1', /a local-use NAT64 address/],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', /Teredo for 127\.0\.0\.1, a loopback address/],
  ])('on a name that resolves to %s, an IPv6 spelling of a private IPv4 address, is refused without a connection', async (address, why) => {
    const r = await receiver();
    const ep = await addEndpoint(db.sql, box, customer, { url: `https://hooks.customer.example:${r.port}/hook`, events: ['restatement'] });
    await emitEvent(db.sql, { type: 'restatement', data: {} });
    await worker({ allowPrivate: false, lookup: async () => [{ address, family: 6 }] }).runOnce();

    expect(r.received).toHaveLength(0);
    const [attempt] = await attemptsOf((await deliveryOf(ep.id)).id);
    expect(attempt!.error).toMatch(/^refused: /);
    expect(attempt!.error).toMatch(why);
  });

  it('is connected to at the address it checked, the name looked up once: a second answer is never used', async () => {
    const r = await receiver();
    const calls: string[] = [];
    // the receiver's address first, then one where nothing listens: a resolver playing DNS rebinding
    const rebinding: Lookup = async (host) => [{ address: calls.push(host) === 1 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const ep = await addEndpoint(db.sql, box, customer, { url: `http://hooks.customer.example:${r.port}/hook`, events: ['restatement'] });
    const id = await emitEvent(db.sql, { type: 'restatement', data: {} });
    await worker({ lookup: rebinding }).runOnce(); // private addresses allowed here: both are loopback
    expect(calls).toEqual(['hooks.customer.example']);
    expect(r.received.map((x) => [x.id, x.headers.host])).toEqual([[id, `hooks.customer.example:${r.port}`]]);
    expect((await deliveryOf(ep.id)).state).toBe('delivered');
  });
});

describe('a slow receiver', () => {
  it('holding its request open delays neither another endpoint nor the next cycle', async () => {
    const slow = await receiver(() => 'hang');
    const fast = await receiver(() => 200);
    await addEndpoint(db.sql, box, customer, { url: slow.url, events: ['source.failing'] });
    await addEndpoint(db.sql, box, customer, { url: fast.url, events: ['source.failing'] });
    const w = worker({ timeoutMs: 60_000, pollMs: 50 });
    w.start();
    const observe = (failing: string[]): PairObservation[] => [{ pair: 'BTCNGN', rate: 1, synthetic: 1, divergencePct: 0, ageSeconds: 10, sourcesFailing: failing, at: new Date() }];

    // a cycle: luno fails
    expect(await detectAlerts(db.sql, observe(['luno']))).toBe(1);
    w.wake();
    await fast.waitFor(1);
    await slow.waitFor(1);
    expect(slow.held).toBe(1);
    // the next cycle runs to its end while the slow endpoint still holds the first event
    expect(await detectAlerts(db.sql, observe(['luno', 'quidax']))).toBe(1);
    w.wake();
    await fast.waitFor(2);
    expect(slow.held).toBe(1);
    expect(slow.received).toHaveLength(1);
    expect(fast.received.map((x) => JSON.parse(x.body).data.exchange)).toEqual(['luno', 'quidax']);

    // once it answers, the slow endpoint gets the next event too
    slow.release();
    await slow.waitFor(2);
    expect(slow.received.map((x) => JSON.parse(x.body).data.exchange)).toEqual(['luno', 'quidax']);
    slow.release();
  });
});
