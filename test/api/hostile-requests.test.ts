// Hostile requests beyond single parameter values (hostile.test.ts): bodies nested thousands deep
// and body fields of the wrong JSON type on every route that reads a body, broken framing and Host
// headers on a raw socket, keys with junk around them, unknown query parameters on every GET route,
// and the headers every answer carries. The routes come from the route table, never a hand list.
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
