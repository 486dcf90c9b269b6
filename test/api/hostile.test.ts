// Hostile input, generated from the routes' own schemas: every parameter of every operation (query,
// path and body) given values at and beyond the edges of its type, one at a time on an otherwise
// valid request; every header a client controls given junk; and raw bytes Node's HTTP parser
// refuses. Never a 5xx (but a 503 service_unavailable with Retry-After), always the contract's
// {error, message, status} body, never a stack trace or SQL. Bodies nested deep or of the wrong
// types, broken framing, Host, junk around keys and the headers of every answer: hostile-requests.test.ts.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../api/routes/index.js';
import type { Operation } from '../../api/operation.js';
import type { ObjectSchema } from '../../api/validate.js';
import { request, startTestApi, type HttpResult, type TestApi } from '../support/api.js';
import { TIER_RULES } from '../../lib/tiers.js';

let t: TestApi;
beforeAll(async () => {
  // behind one proxy: each request comes from an address of its own (below), so per-address limits
  // (5 free keys an hour) never stop a hostile value before it reaches the database
  t = await startTestApi({ hours: 2, env: { TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await t?.close();
});

const today = new Date().toISOString().slice(0, 10);
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

/** Values at and past the edges of any type a parameter can have. */
const HOSTILE: readonly string[] = [
  '', ' ', '%00', '\u0000', 'null', 'undefined', 'true', '[]', '{}', '[1,2]', "' OR '1'='1", '1;DROP TABLE trades', '../../etc/passwd',
  '%', '%%', '%zz', '\uFFFF', '🦄', 'ñ'.repeat(300), 'A'.repeat(10_000), '-1', '0', '-0', '1e309', '-1e309', '1e-400', 'NaN', 'Infinity',
  '9007199254740993', '99999999999999999999', '0x10', '1_000', '1.5', '.5', '5.', '+1', ' 1', '1 ',
  '0000-01-01', '1969-12-31', '1970-01-01', '2000-02-29', '2100-02-29', '9999-12-31', '10000-01-01', '2026-02-29', '2026-13-01', '2026-00-10', '2026-11-31',
  '-2026-01-01', '2026-1-1', '2026-11-21T00:00:00Z', '2026-11-21T00:00:00+00:00', '2026-11-21 00:00:00+00:00', '9999-12-31T23:59:59+00:00',
  '0000-01-01T00:00:00+00:00', '2026-11-21T00:00:00.1234567+00:00', '2026-11-21T24:00:00+00:00',
];

/** The valid email of base requests (each request is then given one of its own). */
const baseEmail = 'hostile@example.test';

/** A valid value for a parameter, from its schema and name. */
function valid(name: string, schema: Record<string, unknown>): string | undefined {
  if (name === 'pair' || name === 'pairs') return 'BTCNGN';
  if (name === 'timestamp') return new Date(Math.floor((Date.now() - 3_600_000) / 300_000) * 300_000).toISOString().replace('.000Z', '+00:00');
  if (name === 'email') return baseEmail;
  if (schema.format === 'date') return name === 'end' ? today : yesterday;
  if (name === 'month') return today.slice(0, 7);
  if (Array.isArray(schema.enum)) return String(schema.enum[0]);
  if (schema.type === 'boolean') return 'false';
  if (schema.type === 'integer' || schema.type === 'number') return String(schema.minimum ?? 1);
  return undefined; // optional and free-form: left out of the base request
}

function baseValues(schema: ObjectSchema | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, s] of Object.entries(schema?.properties ?? {})) {
    const v = valid(name, s as Record<string, unknown>);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function url(op: Operation, params: Record<string, string>, query: Record<string, string>): string {
  const path = op.path.replace(/:(\w+)/g, (_, n: string) => encodeURIComponent(params[n] ?? ''));
  const qs = new URLSearchParams(query).toString();
  return qs ? `${path}?${qs}` : path;
}

let sent = 0;

/** Enterprise keys, a new one every 5,000 requests: the file sends more than one key's 10,000 a minute. */
const keys = new Map<number, Promise<string>>();
const keyFor = (n: number) => {
  const block = Math.floor(n / 5_000);
  if (!keys.has(block)) keys.set(block, block === 0 ? Promise.resolve(t.keys.enterprise) : t.key('enterprise'));
  return keys.get(block)!;
};

async function send(op: Operation, params: Record<string, string>, query: Record<string, string>, body?: Record<string, unknown>): Promise<HttpResult> {
  const n = ++sent;
  const headers: Record<string, string> = { 'X-API-Key': await keyFor(n), 'X-Forwarded-For': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` };
  // a body with an email gets one of its own (unless the email is what is tested): one already
  // holding a key is refused (409) before anything else in the body reaches the database
  if (body && 'email' in body && body.email === baseEmail) body = { ...body, email: `hostile${n}@example.test` };
  if (op.method === 'post') return t.post(url(op, params, query), body ?? {}, headers);
  return t.get(url(op, params, query), null, headers);
}

function expectContractError(res: HttpResult, what: string) {
  const text = typeof res.body === 'string' ? res.body : (JSON.stringify(res.body) ?? '');
  expect(res.status >= 500 && !(res.status === 503 && res.body?.error === 'service_unavailable'), `${what} -> ${res.status} ${text.slice(0, 200)}`).toBe(false);
  if (res.status === 503) expect(res.headers.get('retry-after'), what).toMatch(/^\d+$/);
  expect(text, what).not.toMatch(/SELECT |INSERT |\bat .*\.(ts|js):\d+|PostgresError|node_modules/);
  if (res.status >= 400) {
    expect(res.body, `${what}: ${text.slice(0, 200)}`).toEqual({ error: expect.any(String), message: expect.any(String), status: res.status });
  }
}

describe('generated hostile values, one parameter at a time', () => {
  for (const op of operations) {
    it(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const params = baseValues(op.params);
      const query = baseValues(op.query);
      const body = baseValues(op.body);
      // the base request itself is fine (or refused for a reason in the contract, never a 5xx)
      expectContractError(await send(op, params, query, body), `${op.path} base`);
      const checks: Array<() => Promise<void>> = [];
      for (const value of HOSTILE) {
        for (const name of Object.keys(op.params?.properties ?? {})) {
          checks.push(() => send(op, { ...params, [name]: value }, query, body).then((r) => expectContractError(r, `${op.path} path ${name}=${JSON.stringify(value).slice(0, 40)}`)));
        }
        for (const name of Object.keys(op.query?.properties ?? {})) {
          checks.push(() => send(op, params, { ...query, [name]: value }, body).then((r) => expectContractError(r, `${op.path} ?${name}=${JSON.stringify(value).slice(0, 40)}`)));
        }
        for (const name of Object.keys(op.body?.properties ?? {})) {
          for (const v of [value, Number(value), null, [value], { value }]) {
            checks.push(() => send(op, params, query, { ...body, [name]: v }).then((r) => expectContractError(r, `${op.path} body ${name}=${JSON.stringify(v).slice(0, 40)}`)));
          }
        }
        checks.push(() => send(op, params, { ...query, unknown_param: value }, body).then((r) => expectContractError(r, `${op.path} unknown param`)));
      }
      // 50 at a time: hostile, but not a denial of service on the test's own two cores
      for (let i = 0; i < checks.length; i += 50) await Promise.all(checks.slice(i, i + 50).map((check) => check()));
    }, 120_000);
  }
});

describe('free keys', () => {
  it('says a body that is JSON but not an object must be an object', async () => {
    for (const body of ['null', '42', '"a@b.test"', 'true']) {
      const res = await t.post('/v1/auth/free-key', body, { 'X-Forwarded-For': `10.255.0.${++sent & 255}` });
      expect(res.status, body).toBe(400);
      expect(res.body.message, body).toBe('the request body must be a JSON object');
    }
  });

  it('issues one key when many ask at once for the same email, and tells every other why', async () => {
    const op = operations.find((o) => o.path === '/v1/auth/free-key')!;
    // as many at once as the key send() gives them may have in flight (its Enterprise share)
    const answers = await Promise.all(Array.from({ length: TIER_RULES.enterprise.concurrent }, () => send(op, {}, {}, { email: 'same@example.test', customer_name: 'Same' })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body.message).toMatch(/already has an active free key/);
    }
    const [{ n } = { n: 0 }] = await t.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM api_keys WHERE lower(email) = 'same@example.test'`;
    expect(n).toBe(1);
  });

  it("refuses control characters in a free key's customer_name, naming the field (PostgreSQL refuses NUL: it was a 500)", async () => {
    const op = operations.find((o) => o.path === '/v1/auth/free-key')!;
    for (const name of ['a\u0000b', 'tab\there', ' padded']) {
      const res = await send(op, {}, {}, { email: baseEmail, customer_name: name });
      expect(res.status, JSON.stringify(name)).toBe(400);
      expect(res.body.message).toMatch(/customer_name.*control characters/);
    }
  });
});

describe('hostile headers', () => {
  const HEADERS: Array<Record<string, string>> = [
    { 'Accept-Encoding': '*;q=0' },
    { 'Accept-Encoding': 'gzip;q=0, identity;q=0, *;q=0' },
    { 'Accept-Encoding': 'br;q=NaN, gzip;q=-1' },
    { 'Accept-Encoding': ','.repeat(2_000) },
    { 'Accept-Encoding': 'zstd, br, deflate' },
    { Accept: 'text/html' },
    { Accept: '*/*;q=foo' },
    { 'Content-Type': 'application/json; charset=ebcdic' },
    { 'Content-Encoding': 'gzip' },
    { 'Content-Encoding': 'br' },
    { 'Content-Encoding': 'chunked, gzip' },
    { 'X-API-Key': '' },
    { 'X-API-Key': ' afr_live_ ' },
    { 'X-API-Key': 'afr_live_' + 'Z'.repeat(32) },
    { 'X-API-Key': 'x'.repeat(8_000) },
    { 'X-Forwarded-For': 'not an address, ::ffff:999.1.1.1, ' + '1.1.1.1,'.repeat(200) },
    { 'X-RapidAPI-Proxy-Secret': 'guess', 'X-RapidAPI-User': 'u'.repeat(500), 'X-RapidAPI-Subscription': 'MEGA' },
    { Range: 'bytes=0-10' },
    { 'If-None-Match': '*' },
    { Origin: 'null' },
    { 'Access-Control-Request-Method': 'DELETE' },
    { Authorization: 'Bearer x' },
    { Cookie: 'a='.repeat(1_000) },
  ];
  it.each(HEADERS.map((h) => [JSON.stringify(h).slice(0, 60), h] as const))('%s', async (_, headers) => {
    for (const path of ['/v1/rates/live?pairs=BTCNGN', '/v1/rates/markets', '/v1/health', '/v1/pairs']) {
      expectContractError(await t.get(path, headers['X-API-Key'] === undefined ? t.keys.enterprise : null, headers), `${path} ${JSON.stringify(headers).slice(0, 80)}`);
    }
    expectContractError(
      await request(t.api.url, 'POST', '/v1/auth/free-key', { headers: { 'Content-Type': 'application/json', ...headers }, body: 'not what the headers say' }),
      `POST ${JSON.stringify(headers).slice(0, 80)}`,
    );
  });
});

/**
 * Sends raw bytes and returns what came back before the server closed; `halfClose`: the client
 * ends its side right after sending, as some do.
 */
function raw(bytes: string, halfClose = true): Promise<string> {
  const { port } = new URL(t.api.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => (halfClose ? socket.end(bytes) : socket.write(bytes)));
    setTimeout(() => socket.destroy(), 10_000).unref();
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
  });
}

describe('requests the HTTP parser refuses', () => {
  const REQUESTS: Array<[string, string]> = [
    ['a control character in the URL', 'GET /v1/pairs\x01 HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a space in the URL', 'GET /v1/ pairs HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['headers too large', `GET /v1/pairs HTTP/1.1\r\nHost: x\r\nX-A: ${'a'.repeat(20_000)}\r\n\r\n`],
    ['a bad Content-Length', 'POST /v1/auth/free-key HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'],
    ['two Content-Lengths', 'POST /v1/auth/free-key HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}'],
    ['an unknown method', 'FOO /v1/pairs HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['TRACE', 'TRACE /v1/pairs HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['PROPFIND', 'PROPFIND /v1/pairs HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header without a colon', 'GET /v1/pairs HTTP/1.1\r\nHost: x\r\nBroken\r\n\r\n'],
    ['HTTP/9.9', 'GET /v1/pairs HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['garbage', '\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03'],
    ['a body cut short', 'POST /v1/auth/free-key HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"email":'],
  ];
  it.each(REQUESTS)('%s gets an answer in the error shape', async (_, bytes) => {
    const answer = await raw(bytes);
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
    expect(status, answer.slice(0, 200)).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    expect(JSON.parse(body)).toEqual({ error: expect.any(String), message: expect.any(String), status });
  });

  it('answers a bad request after a good one on the same keep-alive connection', async () => {
    const answer = await raw('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/pairs\x01 HTTP/1.1\r\nHost: x\r\n\r\n', false);
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 400]);
    expect(JSON.parse(answer.slice(answer.lastIndexOf('\r\n\r\n') + 4))).toMatchObject({ error: 'validation_error', status: 400 });
  });

  it('answers a client too slow to send its headers with 408 after 10 s, not a minute later', async () => {
    const started = Date.now();
    const { port } = new URL(t.api.url);
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => socket.write('GET /v1/pairs HTTP/1.1\r\nHost: x\r\n'));
      const drip = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 1_000);
      let out = '';
      socket.on('data', (d) => (out += d.toString()));
      socket.on('close', () => {
        clearInterval(drip);
        resolve(out);
      });
    });
    const waited = Date.now() - started;
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'request_timeout', message: expect.any(String), status: 408 });
    expect(waited).toBeGreaterThanOrEqual(9_000);
    expect(waited).toBeLessThan(13_000);
  }, 30_000);

  it('keeps an idle connection open for a proxy to reuse, and says for how long', async () => {
    // A load balancer keeps idle connections to the API for 60 s and reuses them; had the API
    // closed one first (Node's default is 5 s), the request sent on it would be a 502.
    const { port } = new URL(t.api.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let closed = false;
    socket.on('close', () => (closed = true));
    const next = () => new Promise<string>((resolve) => {
      let out = '';
      const onData = (d: Buffer) => {
        out += d.toString();
        const head = out.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(out)?.[1] ?? NaN);
        if (head >= 0 && out.length >= head + 4 + length) {
          socket.off('data', onData);
          resolve(out);
        }
      };
      socket.on('data', onData);
      socket.write('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    const first = await next();
    expect(first).toMatch(/^HTTP\/1\.1 200 /);
    expect(first).toMatch(/\r\nKeep-Alive: timeout=65\r\n/i);
    // idle past Node's default (5 s) with nothing to wait for: how long it stays open is what is tested
    await new Promise((r) => setTimeout(r, 6_000));
    expect(closed).toBe(false);
    expect(await next()).toMatch(/^HTTP\/1\.1 200 /);
    socket.destroy();
  }, 20_000);

  it('answers Node-refused and half-closed requests in bulk and keeps serving', async () => {
    await Promise.all(Array.from({ length: 100 }, (_, i) => raw(i % 2 ? 'GET /v1/pairs\x7f HTTP/1.1\r\n\r\n' : 'GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n')));
    expect((await t.get('/v1/health')).status).toBe(200);
  });
});
