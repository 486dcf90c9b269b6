// Hostile requests beyond single parameter values (hostile.test.ts): bodies nested thousands deep
// and body fields of the wrong JSON type on every route that reads a body, broken framing and Host
// headers on a raw socket, keys with junk around them, unknown query parameters on every GET route,
// and the headers every answer carries. The routes come from the route table, never a hand list.
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Operation } from '../../api/operation.js';
import { MAX_BODY_DEPTH } from '../../api/middleware/body.js';
import { operations } from '../../api/routes/index.js';
import { request, startTestApi, type HttpResult, type TestApi } from '../support/api.js';

let t: TestApi;
/** What the service logged at error level or above (pino levels: 50 error, 60 fatal). */
const errorLines: string[] = [];
beforeAll(async () => {
  const log = pino({ level: 'error' }, { write: (line: string) => void errorLines.push(line) });
  // behind one proxy: each request comes from an address of its own, so per-address limits never answer first
  t = await startTestApi({ hours: 1, env: { TRUST_PROXY: '1' }, log });
});
afterAll(async () => {
  await t?.close();
});

let sent = 0;
const address = () => `10.77.${(++sent >> 8) & 255}.${sent & 255}`;

/** An operation's path with valid-looking path parameters (an id that is no one's). */
function pathOf(op: Operation): string {
  const today = new Date().toISOString().slice(0, 10);
  const bucket = new Date(Math.floor((Date.now() - 3_600_000) / 300_000) * 300_000).toISOString().replace('.000Z', '+00:00');
  return op.path.replace(/:(\w+)/g, (_, name: string) => {
    const schema = (op.params?.properties[name] ?? {}) as { enum?: string[]; format?: string };
    if (schema.enum) return schema.enum[0]!;
    if (name === 'pair') return 'BTCNGN';
    if (name === 'timestamp') return encodeURIComponent(bucket);
    if (schema.format === 'date') return today;
    return '999999';
  });
}

function send(op: Operation, body: string, path = pathOf(op)): Promise<HttpResult> {
  return request(t.api.url, op.method.toUpperCase(), path, {
    headers: { 'Content-Type': 'application/json', 'X-API-Key': t.keys.enterprise, 'X-Forwarded-For': address() },
    body,
  });
}

function expectShape(res: HttpResult, status: number, what: string): void {
  expect(res.status, `${what}: ${JSON.stringify(res.body).slice(0, 200)}`).toBe(status);
  expect(res.body, what).toEqual({ error: expect.any(String), message: expect.any(String), status });
}

/** Every operation a body is read for: the body parser reads one for each of these methods. */
const bodyRoutes = operations.filter((op) => op.method === 'post' || op.method === 'delete');

describe('bodies nested too deeply', () => {
  const nested = (levels: number) => `{"a":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;

  it('are refused 400 on every route that reads a body, nothing logged as an error (5,000 levels overflowed the stack: a 500)', async () => {
    expect(bodyRoutes.length).toBeGreaterThan(5);
    for (const op of bodyRoutes) {
      for (const body of [nested(5_000), `[${nested(5_000)}]`, nested(MAX_BODY_DEPTH + 1)]) {
        const res = await send(op, body);
        expectShape(res, 400, `${op.method} ${op.path} ${body.length} bytes`);
        expect(res.body.message).toMatch(new RegExp(`nested too deeply \\(at most ${MAX_BODY_DEPTH} levels`));
      }
    }
    expect(errorLines).toEqual([]);
  });

  it('are read up to the bound: a body just within it reaches the route, which names the field', async () => {
    const op = operations.find((o) => o.path === '/v1/account/keys' && o.method === 'post')!;
    const res = await send(op, `{"label":${'['.repeat(MAX_BODY_DEPTH - 1)}${']'.repeat(MAX_BODY_DEPTH - 1)}}`);
    expectShape(res, 400, 'at the bound');
    expect(res.body.message).toBe("body parameter 'label' must be a string");
  });

  it("refuses a '__proto__' key at any depth, as the parser it replaced did", async () => {
    const op = operations.find((o) => o.path === '/v1/account/keys' && o.method === 'post')!;
    for (const body of ['{"__proto__":{"label":"x"}}', '{"label":"x","a":[{"__proto__":null}]}']) {
      const res = await send(op, body);
      expectShape(res, 400, body);
      expect(res.body.message).toBe("the request body may not have a '__proto__' key");
    }
  });
});

describe('a name given twice in one object', () => {
  it('is refused 400 naming it on every route that reads a body, at any depth and however it is escaped (the last value was kept)', async () => {
    for (const op of bodyRoutes) {
      for (const [body, name] of [
        ['{"label":"a","label":"b"}', 'label'],
        ['{"label":"a","\\u006cabel":"b"}', 'label'],
        ['{"events":[{"x":1,"y":{"x":2},"x":3}]}', 'x'],
      ] as const) {
        const res = await send(op, body);
        expectShape(res, 400, `${op.method} ${op.path} ${body}`);
        expect(res.body.message).toBe(`the request body gives '${name}' twice in one object`);
      }
    }
  });

  it('leaves alone the same name in different objects, and names inside strings', async () => {
    const op = operations.find((o) => o.path === '/v1/account/keys' && o.method === 'post')!;
    const res = await send(op, '{"label":"a\\",\\"label\\":","z":[{"a":1},{"a":2}]}');
    expectShape(res, 400, 'one name per object');
    expect(res.body.message).toBe("unknown body parameter 'z'");
  });
});

describe('body fields of the wrong JSON type', () => {
  type FieldSchema = { type?: string | string[]; enum?: unknown[]; items?: { enum?: unknown[] }; minimum?: number };
  /** A valid value of a required field (the base every wrong value is sent on). */
  const validOf = (name: string, s: FieldSchema): unknown =>
    name === 'email' ? `types${++sent}@example.test` : name === 'url' ? 'https://hooks.example.test/afrates' : s.items?.enum ? [s.items.enum[0]] : 'x';
  /** A value of another JSON type than the field's, one that reads as the right type once converted. */
  const wrongOf = (s: FieldSchema): unknown => {
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    if (type === 'string') return 12345;
    if (type === 'integer' || type === 'number') return String(s.minimum ?? 1);
    if (type === 'boolean') return 'true';
    return 'BTCNGN'; // an array given as one value
  };

  it('are refused 400 naming the field on every route with a body, never converted ({"label": 12345} made a key labelled "12345")', async () => {
    const withBody = operations.filter((op) => op.body);
    expect(withBody.length).toBeGreaterThan(2);
    for (const op of withBody) {
      const props = op.body!.properties as Record<string, FieldSchema>;
      const required = ((op.body as { required?: string[] }).required ?? []).filter((n) => n in props);
      for (const [name, schema] of Object.entries(props)) {
        const body: Record<string, unknown> = {};
        for (const r of required) body[r] = validOf(r, props[r]!);
        body[name] = wrongOf(schema);
        const res = await send(op, JSON.stringify(body));
        expectShape(res, 400, `${op.path} ${name}=${JSON.stringify(body[name])}`);
        expect(res.body.message, `${op.path} ${name}`).toMatch(new RegExp(`^body parameter '${name}' must be `));
      }
    }
  });

  it('keeps converting query parameters, which arrive as text', async () => {
    const res = await t.get('/v1/rates/live?pairs=BTCNGN&include_sources=true&min_confidence=0.5', t.keys.enterprise);
    expect(res.status).toBe(200);
  });
});

/**
 * Sends raw bytes on a connection left open (the client does not end its side, as a real client
 * waiting for its answer would not) and resolves with what comes back once the server closes it;
 * fails if it has not within 3 s (the server would otherwise hold it until its request timeout).
 */
function answerOf(bytes: string | Buffer): Promise<string> {
  const { port } = new URL(t.api.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(bytes));
    let out = '';
    socket.setTimeout(3_000, () => {
      socket.destroy();
      reject(new Error(`no answer within 3 s; had: ${JSON.stringify(out.slice(0, 200))}`));
    });
    socket.on('data', (d) => {
      out += d.toString('latin1');
      // an answer complete by its Content-Length is enough (a 200 would keep the connection open)
      const head = out.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(out.slice(0, head))?.[1] ?? NaN);
      if (head >= 0 && out.length >= head + 4 + length) {
        socket.destroy();
        resolve(out);
      }
    });
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

/** The status, headers and JSON body of a raw answer. */
function parsed(answer: string): { status: number; headers: string; body: unknown } {
  const head = answer.indexOf('\r\n\r\n');
  const headers = answer.slice(0, head);
  let body: unknown = answer.slice(head + 4);
  try {
    body = JSON.parse(body as string);
  } catch {
    /* not JSON: the assertion says so */
  }
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]), headers, body };
}

describe('broken framing and Host headers, on a raw socket', () => {
  const POST = 'POST /v1/auth/free-key HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n';
  const CASES: Array<[string, string]> = [
    ['a chunk size that is not hex', `${POST}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
    ['a negative chunk size', `${POST}Transfer-Encoding: chunked\r\n\r\n-2\r\n{}\r\n0\r\n\r\n`],
    ['a 20 KB chunk extension', `${POST}Transfer-Encoding: chunked\r\n\r\n2;${'e'.repeat(20_000)}\r\n{}\r\n0\r\n\r\n`],
    ['bare LFs in a chunked body', `${POST}Transfer-Encoding: chunked\r\n\r\n2\n{}\n0\n\n`],
    ['a bare LF after chunk data', `${POST}Transfer-Encoding: chunked\r\n\r\n2\r\n{}\n0\r\n\r\n`],
    ['Transfer-Encoding: xchunked', `${POST}Transfer-Encoding: xchunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
    ['no Host header', 'GET /v1/health HTTP/1.1\r\n\r\n'],
    ['two Host headers', 'GET /v1/health HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n'],
    ['two Host headers on a POST', `POST /v1/auth/free-key HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\nContent-Type: application/json\r\nContent-Length: 28\r\n\r\n{"email":"two-hosts@x.test"}`],
  ];
  it.each(CASES)('%s: 400 in the error shape at once (was held to the 15 s timeout, or answered bare, or served)', async (_, bytes) => {
    const answer = parsed(await answerOf(bytes));
    expect(answer.status, answer.headers).toBe(400);
    expect(answer.body).toEqual({ error: 'validation_error', message: expect.any(String), status: 400 });
    expect(answer.headers).toMatch(/\r\nX-Content-Type-Options: nosniff\r\n/i);
  });

  it('serves HTTP/1.0 without Host, and HTTP/1.1 with one', async () => {
    expect(parsed(await answerOf('GET /v1/health HTTP/1.0\r\n\r\n')).status).toBe(200);
    expect(parsed(await answerOf('GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n')).status).toBe(200);
  });
});

describe('the headers every answer carries', () => {
  const nosniff = (res: HttpResult, what: string) => expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');

  it('nosniff on JSON, errors, web pages, files, event streams and exports; no-store but where a route says how its answer may be kept', async () => {
    const e = t.keys.enterprise;
    const answers: Array<[string, HttpResult, string | RegExp]> = [
      ['JSON', await t.get('/v1/pairs', e), 'no-store'],
      ['a 404', await t.get('/v1/nothing-here', e), 'no-store'],
      ['a 401', await t.get('/v1/pairs', 'afr_live_wrong'), 'no-store'],
      ['a 400', await t.get('/v1/rates/live?pairs=NOPE', e), 'no-store'],
      ['the public board', await t.get('/v1/board', null, { 'X-Forwarded-For': address() }), /^public, max-age=\d+$/],
      ['an event stream', await t.get('/v1/rates/stream?pairs=BTCNGN', e), /^no-cache/],
      ['an export file', await t.get(`/v1/exports/candles?pair=BTCNGN&month=${new Date().toISOString().slice(0, 7)}`, e), 'no-store'],
      ['the home page', await t.get('/', null), /^(no-cache|no-store)$/], // no-store: a 404 without a build
      ['the verifier download', await t.get('/verify/afrates-verify.mjs', null), /^public, max-age=\d+$/],
    ];
    expect(answers.find(([what]) => what === 'an export file')![1].headers.get('content-type')).toBe('application/gzip');
    for (const [what, res, cache] of answers) {
      nosniff(res, what);
      expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
      if (typeof cache === 'string') expect(res.headers.get('cache-control'), what).toBe(cache);
      else expect(res.headers.get('cache-control'), what).toMatch(cache);
    }
  });

  it('no-store on every answer about an account or carrying a key (they were cacheable)', async () => {
    const key = await t.key('free');
    const account = await t.get('/v1/account', key);
    const listed = await t.get('/v1/account/keys', key);
    const created = await t.post('/v1/account/keys', { label: 'staging' }, { 'X-API-Key': key });
    expect(created.status).toBe(201);
    const rotated = await t.post(`/v1/account/keys/${created.body.key.id}/rotate`, {}, { 'X-API-Key': key });
    expect(rotated.status).toBe(201);
    const issued = await t.post('/v1/auth/free-key', { email: `headers${++sent}@example.test` }, { 'X-Forwarded-For': address() });
    expect(issued.status).toBe(201);
    for (const [what, res] of Object.entries({ account, listed, created, rotated, issued })) {
      expect(res.headers.get('cache-control'), what).toBe('no-store');
      nosniff(res, what);
    }
  });
});

describe('API keys with something around them', () => {
  // from an address of its own each time: a refused key is counted against its address's anonymous budget
  const asked = (key: Buffer) =>
    answerOf(Buffer.concat([Buffer.from(`GET /v1/account HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: ${address()}\r\nX-API-Key: `), key, Buffer.from('\r\n\r\n')])).then(parsed);

  it('are refused unless what surrounds them is the spaces and tabs HTTP takes off (a trailing no-break space was accepted)', async () => {
    const key = t.keys.enterprise; // a limit of 10,000 a minute: every answer is about the key, none about its minute
    for (const [what, suffix] of [
      ['a no-break space (Latin-1)', Buffer.from([0xa0])],
      ['a no-break space (UTF-8)', Buffer.from([0xc2, 0xa0])],
      ['a vertical tab', Buffer.from([0x0b])],
      ['a form feed', Buffer.from([0x0c])],
    ] as const) {
      const answer = await asked(Buffer.concat([Buffer.from(key), suffix]));
      expect([400, 401], what).toContain(answer.status); // 400: Node's parser refuses control characters itself
      expect(answer.body, what).toEqual({ error: expect.any(String), message: expect.any(String), status: answer.status });
      const before = await asked(Buffer.concat([suffix, Buffer.from(key)]));
      expect([400, 401], `${what} before`).toContain(before.status);
    }
    expect((await asked(Buffer.from(` \t${key}\t `))).status).toBe(200);
  });
});

describe('unknown query parameters', () => {
  it('are refused by name on every GET route (health took them)', async () => {
    for (const op of operations.filter((o) => o.method === 'get')) {
      const res = await request(t.api.url, 'GET', `${pathOf(op)}?unknown_param=1`, { headers: { 'X-API-Key': t.keys.enterprise, 'X-Forwarded-For': address() } });
      expectShape(res, 400, `${op.path}?unknown_param=1`);
      expect(res.body.message, op.path).toBe("unknown query parameter 'unknown_param'");
    }
  });
});
