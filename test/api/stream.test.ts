// GET /v1/rates/stream: live rates as Server-Sent Events after every snapshot refresh, resumed with
// Last-Event-ID, capped per key and per account by tier, gated like /v1/rates/live, one request when opened, and
// ended when its key is revoked or the server stops.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Ajv } from 'ajv';
import { STREAM_EVENT } from '../../api/schemas.js';
import net from 'node:net';
import { HEARTBEAT_MS, MAX_UNSENT_BYTES } from '../../api/sse.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { until } from '../support/wait.js';
import { openStream, type SseReader } from './sse-client.js';

let t: TestApi;
const open: SseReader[] = [];
const ajv = new Ajv({ strict: false, allErrors: true });
const validEvent = ajv.compile(STREAM_EVENT);

async function stream(query: string, key: string | null, headers: Record<string, string> = {}): Promise<SseReader> {
  const s = await openStream(`${t.api.url}/v1/rates/stream?${query}`, { ...(key ? { 'X-API-Key': key } : {}), ...headers });
  open.push(s);
  return s;
}

beforeAll(async () => {
  t = await startTestApi();
});
afterAll(async () => {
  for (const s of open) s.close();
  await t?.close();
});

describe('GET /v1/rates/stream', () => {
  it('sends the current rates at once, then an event with a larger id after each snapshot refresh', async () => {
    const s = await stream('pairs=BTCNGN,ETHNGN', await t.key('builder'));
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toContain('text/event-stream');
    const first = await s.next();
    expect(first?.event).toBe('rates');
    expect(Number(first!.id)).toBe(t.api.deps.snapshot.version);
    const body = JSON.parse(first!.data);
    expect(validEvent(body), JSON.stringify(validEvent.errors)).toBe(true);
    expect(Object.keys(body.data).sort()).toEqual(['BTCNGN', 'ETHNGN']);

    expect(await s.next(300)).toBeNull(); // nothing until the snapshot moves
    await t.api.deps.snapshot.refresh();
    const second = await s.next();
    expect(second?.event).toBe('rates');
    expect(Number(second!.id)).toBeGreaterThan(Number(first!.id));
    expect(JSON.parse(second!.data).data.BTCNGN.rate).toBeTypeOf('number');
    s.close();
  });

  it("gives each stream its own tier's view and its own request id, however many streams share a refresh", async () => {
    const [free, free2, enterprise] = await Promise.all([
      stream('pairs=BTCNGN', await t.key('free')),
      stream('pairs=BTCNGN', await t.key('free')),
      stream('pairs=BTCNGN&include_sources=true&include_audit=true', await t.key('enterprise')),
    ]);
    for (const s of [free, free2, enterprise]) await s.next(); // the current state
    await t.api.deps.snapshot.refresh();
    const [a, b, c] = await Promise.all([free, free2, enterprise].map(async (s) => JSON.parse((await s.next())!.data)));
    // Builder and up see the sources, Enterprise the signature: a shared event never shows one tier another's
    expect(a.data.BTCNGN.pricing).toBeUndefined();
    expect(a.data.BTCNGN.audit).toBeUndefined();
    expect(c.data.BTCNGN.pricing.exchange).toBeDefined();
    expect(c.data.BTCNGN.audit?.signature).toBeTypeOf('string');
    expect(a.data).toEqual(b.data);
    expect(new Set([a.meta.request_id, b.meta.request_id, c.meta.request_id]).size).toBe(3);
    for (const body of [a, b, c]) expect(validEvent(body), JSON.stringify(validEvent.errors)).toBe(true);
  });

  it('resumes with Last-Event-ID: the current state only if the client missed a refresh', async () => {
    const key = await t.key('professional');
    const version = t.api.deps.snapshot.version;
    const upToDate = await stream('pairs=BTCNGN', key, { 'Last-Event-ID': String(version) });
    expect(await upToDate.next(400)).toBeNull();
    expect(upToDate.raw()).toContain('retry:'); // the stream is open, just quiet
    upToDate.close();

    const behind = await stream('pairs=BTCNGN', key, { 'Last-Event-ID': String(version - 1) });
    const event = await behind.next();
    expect(Number(event?.id)).toBe(version);
    behind.close();

    const garbage = await stream('pairs=BTCNGN', key, { 'Last-Event-ID': 'not-an-id' });
    expect(Number((await garbage.next())?.id)).toBe(version); // unknown id: treated as never seen
    garbage.close();
  });

  it('caps open streams per key by tier (Free: 1) and frees the slot when a stream closes', async () => {
    const key = await t.key('free');
    const first = await stream('pairs=BTCNGN', key);
    expect(first.status).toBe(200);
    const second = await stream('pairs=BTCNGN', key);
    expect(second.status).toBe(429);
    const error = await second.json();
    expect(error).toMatchObject({ error: 'rate_limit_exceeded', status: 429 });
    expect(error.message).toMatch(/1 open stream per key/);
    // the headers name the cap, not the minute: waiting for the minute would not help
    expect(second.headers.get('RateLimit')).toMatch(/^"streams";r=0/);
    const [{ id } = { id: 0 }] = await t.db.sql<{ id: number }[]>`SELECT id::int FROM api_keys WHERE key_prefix = ${key.slice(0, 13)}`;
    first.close();
    // the server notices the client went away
    await until('the server closed the first stream', () => t.api.deps.streams.count(`key:${id}`) === 0, 2_000);
    const again = await stream('pairs=BTCNGN', key);
    expect(again.status).toBe(200);
    again.close();
  });

  it("caps open streams per account across its keys (Free: 2), while another customer's stream opens", async () => {
    const first = await t.key('free');
    const created = [];
    for (const label of ['staging', 'ci']) {
      const res = await t.post('/v1/account/keys', { label }, { 'X-API-Key': first });
      expect(res.status).toBe(201);
      created.push(res.body.api_key as string);
    }
    const [second, third] = created as [string, string];
    expect((await stream('pairs=BTCNGN', first)).status).toBe(200);
    expect((await stream('pairs=BTCNGN', second)).status).toBe(200);
    const over = await stream('pairs=BTCNGN', third); // a key with no stream of its own: the account's cap refuses it
    expect(over.status).toBe(429);
    expect(await over.json()).toMatchObject({ error: 'rate_limit_exceeded', status: 429, message: expect.stringMatching(/At most 2 open streams per account \(all its keys together\) on the Free tier/) });
    expect(over.headers.get('Retry-After')).toBe('5');
    expect(over.headers.get('RateLimit-Policy')).toBe('"streams";q=2');
    const someoneElse = await stream('pairs=BTCNGN', await t.key('free'));
    expect(someoneElse.status).toBe(200);
    someoneElse.close();
  });

  it("names the cap as what refused a stream even when it was the minute's last request", async () => {
    // The minute is a fixed window: one that turns over between the requests gives the budget back,
    // so the sequence is played again (on a fresh key) until one minute holds it.
    let key = '';
    let first: Awaited<ReturnType<typeof stream>> | undefined;
    let tenth: Awaited<ReturnType<typeof stream>> | undefined;
    for (let attempt = 0; attempt < 3 && tenth?.headers.get('X-RateLimit-Remaining') !== '0'; attempt++) {
      first?.close();
      key = await t.key('free'); // 10 a minute, one stream
      first = await stream('pairs=BTCNGN', key);
      let remaining = '';
      while (remaining !== '1') {
        const res = await t.get('/v1/rates/live?pairs=BTCNGN', key);
        expect(res.status).toBe(200);
        remaining = res.headers.get('X-RateLimit-Remaining') ?? '1';
      }
      tenth = await stream('pairs=BTCNGN', key);
    }
    if (!first || !tenth) throw new Error('no refusal');
    expect(tenth.status).toBe(429);
    expect(tenth.headers.get('X-RateLimit-Remaining')).toBe('0');
    expect(tenth.headers.get('RateLimit')).toMatch(/^"streams";r=0/);
    // and a spent minute says so
    const eleventh = await stream('pairs=BTCNGN', key);
    expect(eleventh.status).toBe(429);
    expect(eleventh.headers.get('RateLimit')).toMatch(/^"minute";r=0/);
    first.close();
  });

  it("gates fields by the key's tier, like /v1/rates/live", async () => {
    const free = await stream('pairs=BTCNGN', await t.key('free'));
    const freeRate = JSON.parse((await free.next())!.data).data.BTCNGN;
    expect(Object.keys(freeRate).sort()).toEqual(['calculation', 'data_freshness_seconds', 'data_quality', 'methodology_version', 'rate', 'sources', 'status']);
    free.close();

    const refused = await stream('pairs=BTCNGN&include_synthetic=true', await t.key('free'));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: 'tier_restricted' });

    const builder = await stream('pairs=BTCNGN&include_synthetic=true', await t.key('builder'));
    const rate = JSON.parse((await builder.next())!.data).data.BTCNGN;
    expect(rate.confidence).toBeTypeOf('number');
    expect(rate.pricing.synthetic.method).toBe('cross_rate');
    expect(rate.audit).toBeUndefined();
    builder.close();

    const audit = await stream('pairs=BTCNGN&include_audit=true', await t.key('builder'));
    expect(audit.status).toBe(403);
  });

  it('counts opening as one request and answers bad input in the error shape', async () => {
    const key = await t.key('builder');
    const before = await t.get('/v1/pairs', key);
    const remaining = Number(before.headers.get('x-ratelimit-remaining'));
    const s = await stream('pairs=BTCNGN', key);
    expect(Number(s.headers.get('x-ratelimit-remaining'))).toBe(remaining - 1);
    await t.api.deps.snapshot.refresh(); // events are not requests
    await s.next();
    s.close();
    expect(Number((await t.get('/v1/pairs', key)).headers.get('x-ratelimit-remaining'))).toBe(remaining - 2);

    for (const [query, key2, status, code] of [
      ['pairs=BTCNGN', null, 401, 'unauthorized'],
      ['pairs=NOPE', key, 400, 'validation_error'],
      ['', key, 400, 'validation_error'],
      ['pairs=BTCNGN&interval=1h', key, 400, 'validation_error'],
    ] as const) {
      const bad = await stream(query, key2);
      expect(bad.status, query).toBe(status);
      expect(await bad.json()).toMatchObject({ error: code, status });
    }
  });

  it('sends a heartbeat comment every 15 s while nothing else happens', async () => {
    vi.useFakeTimers({ toFake: ['setInterval'] }); // the server runs in this process: its heartbeat timer is faked
    try {
      const s = await stream('pairs=BTCNGN', await t.key('builder'), { 'Last-Event-ID': String(t.api.deps.snapshot.version) });
      expect(await s.next(200)).toBeNull();
      expect(s.raw()).not.toContain(': heartbeat');
      const heartbeats = (raw: string) => raw.match(/^: heartbeat /gm)?.length ?? 0;
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await s.readUntil((raw) => heartbeats(raw) >= 1, 300);
      expect(s.raw().match(/^: heartbeat /gm)).toHaveLength(1);
      vi.advanceTimersByTime(HEARTBEAT_MS);
      await s.readUntil((raw) => heartbeats(raw) >= 2, 300);
      expect(s.raw().match(/^: heartbeat /gm)).toHaveLength(2);
      s.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('is not buffered by compression: events arrive to a client that accepts gzip', async () => {
    const s = await stream('pairs=BTCNGN', await t.key('builder'), { 'Accept-Encoding': 'gzip' });
    expect(s.headers.get('content-encoding')).toBeNull();
    expect((await s.next())?.event).toBe('rates');
    s.close();
  });

  it("ends when the stream's key is rotated away, at once", async () => {
    const key = await t.key('builder');
    const s = await stream('pairs=BTCNGN', key);
    await s.next();
    const keys = await t.get('/v1/account/keys', key);
    const id = keys.body.keys[0].id;
    const rotated = await t.post(`/v1/account/keys/${id}/rotate`, {}, { 'X-API-Key': key });
    expect(rotated.status).toBe(201);
    expect(await s.ended(2_000)).toBe(true);
  });

  it('a key revoked elsewhere (the key command) loses its stream at the next refresh', async () => {
    const key = await t.key('builder');
    const s = await stream('pairs=BTCNGN', key);
    await s.next();
    const id = (await t.get('/v1/account/keys', key)).body.keys[0].id;
    await t.api.deps.keys.revoke(id);
    await t.api.deps.snapshot.refresh();
    expect(await s.ended(2_000)).toBe(true);
  });

  it('drops a client that stopped reading instead of keeping every event for it', async () => {
    // a client that connects and never reads: each refresh's event piles up in the server once the
    // kernel's buffers are full; past MAX_UNSENT_BYTES the connection is closed (it would otherwise
    // grow for as long as the client stays connected)
    const key = await t.key('enterprise');
    const id = (await t.get('/v1/account/keys', key)).body.keys[0].id as number;
    const pairs = [...t.api.deps.pairs.keys()].join(',');
    const { port } = new URL(t.api.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.write(`GET /v1/rates/stream?pairs=${pairs}&include_sources=true&include_audit=true HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`);
    await new Promise<void>((resolve) => socket.once('data', () => resolve()));
    socket.pause(); // from here on it reads nothing
    const streams = t.api.deps.streams;
    expect(streams.count(`key:${id}`)).toBe(1);
    try {
      const eventBytes = Buffer.byteLength(JSON.stringify([...t.api.deps.pairs.keys()].map((p) => t.api.deps.snapshot.get(p)), (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
      let version = t.api.deps.snapshot.version;
      let pushed = 0;
      // well past the kernel's socket buffers (a few MB on loopback) and the server's own limit
      while (pushed < 32 * MAX_UNSENT_BYTES && streams.count(`key:${id}`) > 0) {
        t.api.deps.snapshot.events.emit('refreshed', ++version); // what a snapshot rebuild announces
        pushed += eventBytes;
        await new Promise((r) => setImmediate(r));
      }
      await expect.poll(() => streams.count(`key:${id}`)).toBe(0);
    } finally {
      socket.destroy();
    }
  }, 60_000);
});
