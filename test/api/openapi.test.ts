// GET /v1/openapi.json is a document client generators can rely on: it passes Redocly's
// recommended-strict ruleset, documents every response the API really sends (checked against real
// requests, headers included), its examples are real responses that still fit their schemas, and
// a TypeScript client generated from it by openapi-typescript type-checks against real bodies
// (and refuses a wrong one) and works with openapi-fetch against the running API.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { Ajv } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import EXAMPLES from '../../api/openapi-examples.json' with { type: 'json' };
import { operations } from '../../api/routes/index.js';
import { buildOpenApi, operationIdOf, type ExamplesFile } from '../../api/routes/openapi.js';
import { ERROR } from '../../api/schemas.js';
import { VERSION } from '../../lib/software.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { captureAll, EXAMPLE_WEBHOOK_LOOKUP, examplesFrom, isFile, keepUnchanged, type Captured } from '../support/openapi-examples.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const root = path.resolve(import.meta.dirname, '../..');
const examples = EXAMPLES as ExamplesFile;
const ajv = new Ajv({ strict: false, allErrors: true });
(addFormatsPlugin as unknown as (a: Ajv) => void)(ajv);
const AFRATES_HEADERS = /^(x-request-id|x-ratelimit-.*|ratelimit|ratelimit-policy|x-quota-.*|retry-after|allow|x-afrates-data|x-has-more|x-next-cursor|x-export-.*|content-disposition|trailer)$/;

let t: TestApi;
let doc: Doc;
let captured: Captured[];
const outDir = path.join(root, 'var', `openapi-client-${crypto.randomBytes(4).toString('hex')}`);

beforeAll(async () => {
  t = await startTestApi({ hours: 52, fixings: true, webhookLookup: EXAMPLE_WEBHOOK_LOOKUP }); // as make openapi-examples: yesterday's fixings are there
  doc = (await t.get('/v1/openapi.json')).body;
  captured = await captureAll(t);
  fs.mkdirSync(outDir, { recursive: true });
}, 300_000); // 52 hours of market and every operation called: past two minutes on a loaded server
afterAll(async () => {
  await t?.close();
  fs.rmSync(outDir, { recursive: true, force: true });
});

async function lint(document: object): Promise<string[]> {
  const config = await createConfig({ extends: ['recommended-strict'] });
  const problems = await lintFromString({ source: JSON.stringify(document, null, 2), absoluteRef: 'openapi.json', config });
  return problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
}

const templateOf = (koaPath: string) => koaPath.replace(/:(\w+)/g, '{$1}');
const operationById = (id: string) => operations.find((o) => operationIdOf(o) === id)!;
const resolve = (d: Doc, node: Doc): Doc => (node?.$ref ? d.components.responses[node.$ref.split('/').pop()] : node);

describe('the OpenAPI document', () => {
  it("passes Redocly's recommended-strict ruleset, with no error and no warning", async () => {
    expect(await lint(doc)).toEqual([]);
    // and as a deployment with the marketplace gateway and a public URL would serve it
    expect(await lint(buildOpenApi(operations, { version: VERSION, publicUrl: 'https://rates.afrates.test/', gateway: true }))).toEqual([]);
  });

  it('names each operation once, camelCase from its method and path, and tags it by resource', () => {
    const ops = Object.entries(doc.paths).flatMap(([p, item]: [string, Doc]) => Object.entries(item).map(([m, op]: [string, Doc]) => ({ p, m, op })));
    expect(ops).toHaveLength(operations.length);
    const ids = ops.map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^(get|post|delete)[A-Z][A-Za-z0-9]*$/);
    expect(doc.paths['/v1/rates/live'].get.operationId).toBe('getRatesLive');
    expect(doc.paths['/v1/certificates/{pair}/{timestamp}'].get.operationId).toBe('getCertificatesPairTimestamp');
    expect(doc.paths['/v1/auth/free-key'].post.operationId).toBe('postAuthFreeKey');
    const tags = doc.tags.map((tag: { name: string }) => tag.name);
    for (const { p, op } of ops) {
      expect(op.tags).toEqual([p.split('/')[2]]);
      expect(tags).toContain(op.tags[0]);
    }
    expect(doc.info.license).toBeDefined();
  });

  it('lists the error responses each operation can answer, no more', () => {
    const codes = (p: string, m = 'get') => Object.keys(doc.paths[p][m].responses);
    expect(codes('/v1/auth/free-key', 'post')).toEqual(['201', '400', '409', '429', '503', '4XX']);
    expect(codes('/v1/rates/live')).toEqual(['200', '400', '401', '403', '429', '503', '4XX']);
    expect(codes('/v1/rates/eod')).toEqual(['200', '400', '401', '404', '429', '503', '4XX']);
    expect(codes('/v1/pairs')).toEqual(['200', '400', '401', '429', '503', '4XX']);
    expect(codes('/v1/health')).toEqual(['200', '400', '503', '4XX']); // 400: an unknown query parameter
    expect(doc.paths['/v1/rates/historical'].get.responses['403'].description).toMatch(/interval_not_available.*history_limit_exceeded/);
    expect(doc.paths['/v1/rates/historical'].get.responses['403'].description).not.toMatch(/tier_restricted/);
    expect(doc.paths['/v1/health'].get.responses['200'].headers['X-RateLimit-Limit']).toBeUndefined();
  });

  it('documents every response the API sent for real, its status, error code and headers', () => {
    for (const c of captured) {
      const where = `${c.method.toUpperCase()} ${c.url} -> ${c.status}`;
      const op = doc.paths[templateOf(operationById(c.operationId).path)][c.status === 405 ? operationById(c.operationId).method : c.method];
      const key = op.responses[String(c.status)] ? String(c.status) : '4XX';
      expect(op.responses[key], where).toBeDefined();
      const response = resolve(doc, op.responses[key]);
      const description: string = op.responses[key].description ?? response.description;
      if (c.status >= 400 && key !== '4XX') expect(description, where).toContain(`\`${(c.value as { error: string }).error}\``);
      const documented = Object.keys(response.headers ?? {}).map((h) => h.toLowerCase());
      for (const [name, header] of Object.entries(response.headers ?? {}) as [string, Doc][]) {
        const resolved = header.$ref ? doc.components.headers[header.$ref.split('/').pop()] : header;
        if (resolved.required) expect(c.responseHeaders[name.toLowerCase()], `${where}: ${name}`).toBeDefined();
      }
      for (const name of Object.keys(c.responseHeaders).filter((h) => AFRATES_HEADERS.test(h))) expect(documented, `${where}: ${name}`).toContain(name);
      expect(Object.keys(response.content), where).toContain(c.responseHeaders['content-type']!.split(';')[0]); // documented as the media type it came in
    }
    // the headers the contract promises, on a success and on an error
    const live = captured.find((c) => c.operationId === 'getRatesLive' && c.status === 200)!;
    for (const h of ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit', 'x-quota-limit', 'x-quota-remaining']) {
      expect(live.responseHeaders[h], h).toBeDefined();
    }
    const limited = captured.find((c) => c.name === 'rate_limit_exceeded' && c.status === 429)!;
    expect(limited.responseHeaders['retry-after']).toMatch(/^\d+$/);
  });
});

describe('the examples (api/openapi-examples.json)', () => {
  it('has a real success response for every operation, and each still fits its schema', () => {
    for (const op of operations) {
      const id = operationIdOf(op);
      const shown = Object.entries(examples.responses[id] ?? {});
      const file = captured.some((c) => c.operationId === id && isFile(c));
      if (file) expect(shown, `${id}: a file is shown by no example`).toEqual([]);
      else expect(shown.length, `${id} has no example: run make openapi-examples`).toBeGreaterThan(0);
      const validate = ajv.compile(op.response);
      for (const [name, e] of shown) expect(validate(e.value), `${id} ${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      if (op.body) {
        const body = ajv.compile(op.body);
        for (const [name, e] of Object.entries(examples.requests[id] ?? {})) expect(body(e.value), `${id} request ${name}`).toBe(true);
      }
    }
    const error = ajv.compile(ERROR);
    for (const [name, e] of Object.entries(examples.errors)) expect(error(e.value), name).toBe(true);
  });

  it('is what make openapi-examples writes today: the same calls, the same examples', () => {
    const fresh = examplesFrom(captured);
    const names = (f: ExamplesFile) => ({
      responses: Object.fromEntries(Object.entries(f.responses).map(([id, r]) => [id, Object.keys(r).sort()])),
      errors: Object.keys(f.errors).sort(),
    });
    expect(names(examples), 'run make openapi-examples').toEqual(names(fresh));
  });

  it('is left as it is by make openapi-examples while the API has not changed (no timestamp or id rewritten)', () => {
    // what make openapi-examples would write today, from today's answers: the committed file, to the byte
    const today = keepUnchanged(examples, examplesFrom(captured));
    const changed = (a: ExamplesFile, b: ExamplesFile) =>
      [...Object.entries(a.responses).flatMap(([id, r]) => Object.keys(r).map((n) => [`${id} ${n}`, r[n], b.responses[id]?.[n]] as const)), ...Object.keys(a.errors).map((n) => [`error ${n}`, a.errors[n], b.errors[n]] as const)]
        .filter(([, x, y]) => JSON.stringify(x) !== JSON.stringify(y))
        .map(([name]) => name);
    expect(changed(today, examples), 'the API changed: run make openapi-examples').toEqual([]);
    expect(JSON.stringify(today, null, 2)).toBe(JSON.stringify(examples, null, 2));
    // and an answer of another shape replaces its example
    const fresh = examplesFrom(captured);
    const [id, byName] = Object.entries(fresh.responses)[0]!;
    const [name, example] = Object.entries(byName)[0]!;
    const another = { ...fresh, responses: { ...fresh.responses, [id]: { ...byName, [name]: { ...example, value: { ...(example.value as object), added_field: 1 } } } } };
    expect(keepUnchanged(examples, another).responses[id]![name]!.value).toHaveProperty('added_field', 1);
  });

  it('appears in the document: success examples per operation, error examples per status', () => {
    const live = doc.paths['/v1/rates/live'].get.responses['200'].content['application/json'].examples;
    expect(Object.keys(live)).toEqual(['free', 'builder', 'enterprise']);
    expect(Object.keys(doc.components.responses.Forbidden.content['application/json'].examples)).toEqual(
      expect.arrayContaining(['tier_restricted', 'interval_not_available', 'history_limit_exceeded']),
    );
    expect(doc.paths['/v1/auth/free-key'].post.requestBody.content['application/json'].examples.issued.value).toMatchObject({ email: expect.any(String) });
  });
});

describe('a TypeScript client generated from the document (openapi-typescript, openapi-fetch)', () => {
  let schemaFile: string;

  beforeAll(async () => {
    schemaFile = path.join(outDir, 'schema.d.ts');
    fs.writeFileSync(schemaFile, astToString(await openapiTS(doc)));
  });

  /** The type of a captured response's body in the generated `paths`. */
  function bodyType(c: Captured): string {
    const op = operationById(c.operationId);
    const method = c.status === 405 ? op.method : c.method;
    const responses = doc.paths[templateOf(op.path)][method].responses;
    const key = responses[String(c.status)] ? String(c.status) : '4XX';
    const media = c.status < 300 ? (op.contentType ?? 'application/json') : 'application/json';
    return `paths[${JSON.stringify(templateOf(op.path))}][${JSON.stringify(method)}]['responses'][${JSON.stringify(key)}]['content'][${JSON.stringify(media)}]`;
  }

  /** Type errors of files written beside the generated schema, by file name. */
  function typeErrors(files: Record<string, string>): Record<string, string[]> {
    const names = Object.entries(files).map(([name, text]) => {
      const file = path.join(outDir, name);
      fs.writeFileSync(file, text);
      return file;
    });
    const program = ts.createProgram(names, {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    const out: Record<string, string[]> = Object.fromEntries(Object.keys(files).map((n) => [n, []]));
    for (const d of ts.getPreEmitDiagnostics(program)) {
      const name = d.file ? path.basename(d.file.fileName) : 'global';
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      (out[name] ??= []).push(`${name}:${line} ${ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0]}`);
    }
    return out;
  }

  it('types every real response body, successes and errors, with no type error; a wrong body fails', () => {
    const real = captured.filter((c) => !(c.until && c.status < 300) && !isFile(c));
    const constants = real.map((c, i) => `// ${c.method.toUpperCase()} ${c.url.slice(0, 100)} -> ${c.status}\nexport const body${i}: ${bodyType(c)} = ${JSON.stringify(c.value)};`);
    const live = real.find((c) => c.operationId === 'getRatesLive' && c.status === 200)!;
    const eod = real.find((c) => c.operationId === 'getRatesEod' && c.status === 200)!;
    const liveBody = live.value as { data: Record<string, { rate: unknown }> };
    const [pair] = Object.keys(liveBody.data);
    const errors = typeErrors({
      'real.ts': `import type { paths } from './schema.js';\n\n${constants.join('\n\n')}\n`,
      'wrong.ts': [
        `import type { paths } from './schema.js';`,
        `// a rate as a string`,
        `export const wrongType: ${bodyType(live)} = ${JSON.stringify({ ...liveBody, data: { ...liveBody.data, [pair!]: { ...liveBody.data[pair!], rate: String(liveBody.data[pair!]!.rate) } } })};`,
        `// a field the schema does not have`,
        `export const unknownField: ${bodyType(eod)} = ${JSON.stringify({ ...(eod.value as object), currency: 'NGN' })};`,
        `// a required field missing`,
        `const { close: _close, ...withoutClose } = ${JSON.stringify(eod.value)};`,
        `export const missingField: ${bodyType(eod)} = withoutClose;`,
      ].join('\n'),
    });
    expect(real.length).toBeGreaterThan(operations.length);
    expect(errors['real.ts']).toEqual([]);
    expect(Object.keys(errors).filter((n) => !['real.ts', 'wrong.ts'].includes(n))).toEqual([]); // nothing wrong in the generated schema itself
    expect(errors['wrong.ts']!.map((e) => Number(e.split(' ')[0]!.split(':')[1]))).toEqual([3, 5, 8]);
  });

  it('calls the running API through openapi-fetch, typed by the generated paths', async () => {
    const key = await t.key('builder');
    const client = [
      `import createClient from 'openapi-fetch';`,
      `import type { paths } from './schema.js';`,
      `export async function run(baseUrl: string, key: string) {`,
      `  const api = createClient<paths>({ baseUrl, headers: { 'X-API-Key': key } });`,
      `  const live = await api.GET('/v1/rates/live', { params: { query: { pairs: 'BTCNGN', include_sources: true } } });`,
      `  const rate: number | undefined = live.data?.data['BTCNGN']?.rate;`,
      `  const weights: number[] | undefined = live.data?.data['BTCNGN']?.pricing?.exchange?.sources.map((s) => s.weight);`,
      `  const page = await api.GET('/v1/rates/historical', { params: { query: { pair: 'BTCZAR', start: '${new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)}', end: '${new Date().toISOString().slice(0, 10)}', interval: '5m', limit: 2 } } });`,
      `  const cursor: string | null | undefined = page.data?.meta.next_cursor;`,
      `  const missing = await api.GET('/v1/rates/eod', { params: { query: { pair: 'BTCNGN', date: '2020-01-02' } } });`,
      `  const code: string | undefined = missing.error?.error;`,
      `  const cert = await api.GET('/v1/certificates/{pair}/{timestamp}', { params: { path: { pair: 'BTCNGN', timestamp: '2020-01-01T00:00:00+00:00' } } });`,
      `  return { rate, weights, cursor, code, certStatus: cert.response.status, limit: live.response.headers.get('X-RateLimit-Limit') };`,
      `}`,
    ].join('\n');
    expect(typeErrors({ 'client.ts': client })['client.ts']).toEqual([]);
    const { run } = (await import(path.join(outDir, 'client.ts'))) as { run(baseUrl: string, key: string): Promise<Record<string, unknown>> };
    const result = await run(t.api.url, key);
    expect(result).toMatchObject({ rate: expect.any(Number), cursor: expect.any(String), code: 'not_found', certStatus: 403, limit: '30' });
    expect((result.weights as number[]).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });
});
