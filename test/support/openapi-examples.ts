// The OpenAPI document's examples are real responses: this calls every operation of the running
// test API (test/support/api.ts, with market data) once or more, successes and the typical errors,
// and turns what came back into api/openapi-examples.json, which api/routes/openapi.ts reads.
//   make openapi-examples     (npx tsx test/support/openapi-examples.ts) rewrites that file
// test/api/openapi.test.ts runs the same calls to check the generated client against real bodies.
// A new operation needs no entry here if its required parameters are ones SAMPLE knows; otherwise
// add its calls to callsFor() below.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Operation } from '../../api/operation.js';
import { operationIdOf, type Example, type ExamplesFile } from '../../api/routes/openapi.js';
import { operations } from '../../api/routes/index.js';
import { tierLabel, type Tier } from '../../lib/tiers.js';
import { latestHead, publishHead } from '../../lib/transparency/log.js';
import type { Lookup } from '../../lib/webhooks/addresses.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { param } from '../../lib/methodology/parameters.js';
import { restate } from '../../pipeline/restate.js';
import { recordLateTrades } from '../../pipeline/settle.js';
import { insertTrades } from '../../pipeline/store.js';
import { logRestatement } from '../../pipeline/transparency.js';
import { WebhookWorker } from '../../pipeline/webhooks/worker.js';
import { startTestApi, type TestApi } from './api.js';
import { testLog } from './db.js';

export const EXAMPLES_FILE = path.resolve(import.meta.dirname, '../../api/openapi-examples.json');

export interface Call {
  /** the operation this illustrates */
  readonly operationId: string;
  /** the example's name: for a success, under the operation; for an error, its code (unique in the file) */
  readonly name: string;
  /** whose key: a fresh one of that tier (own limits), a given key, or none */
  readonly key: Tier | { readonly apiKey: string; readonly tier: Tier } | null;
  readonly method: Operation['method'];
  /** path and query, as sent */
  readonly url: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
  /** the status it must answer */
  readonly status: number;
  /** sent until it answers `status`, answering 200 meanwhile (a limit being used up): those 200s are no examples */
  readonly until?: true;
}

export interface Captured extends Call {
  readonly headers: Readonly<Record<string, string>>;
  /** the response's headers, lower-case names */
  readonly responseHeaders: Readonly<Record<string, string>>;
  /** the JSON body (for an event stream: the data of its first event; for a file, undefined: no example) */
  readonly value: unknown;
}

/** A success that is a file (gzip, Parquet), not JSON or text: the document shows no example of it. */
export const isFile = (c: Pick<Captured, 'status' | 'responseHeaders'>): boolean =>
  c.status < 300 && !/^(application\/json|text\/)/.test(c.responseHeaders['content-type'] ?? '');

const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

/** Values for required parameters by name, for operations without calls of their own. */
const SAMPLE: Readonly<Record<string, () => string>> = {
  pair: () => 'BTCNGN',
  pairs: () => 'BTCNGN,BTCZAR',
  date: () => day(-1),
  start: () => day(0),
  end: () => day(0),
  month: () => day(0).slice(0, 7),
};

const opOf = (operationId: string) => operations.find((o) => operationIdOf(o) === operationId);

/** A success call made from the operation's own schemas, or null when a required value is unknown. */
function derivedCall(op: Operation): Call | null {
  if (op.body && ((op.body as { required?: readonly string[] }).required ?? []).length) return null;
  let url = op.path;
  for (const name of Object.keys(op.params?.properties ?? {})) {
    if (!SAMPLE[name]) return null;
    url = url.replace(`:${name}`, encodeURIComponent(SAMPLE[name]()));
  }
  const query = new URLSearchParams();
  for (const name of (op.query as { required?: readonly string[] } | undefined)?.required ?? []) {
    if (!SAMPLE[name]) return null;
    query.set(name, SAMPLE[name]());
  }
  const qs = query.toString();
  return { operationId: operationIdOf(op), name: 'example', key: op.tier, method: op.method, url: qs ? `${url}?${qs}` : url, ...(op.body ? { body: {} } : {}), status: op.status ?? 200 };
}

/**
 * The calls, in order. Some depend on what an earlier one answered (a certificate's timestamp, a
 * key's id), so this is a generator fed each answer.
 */
async function* callsFor(t: TestApi): AsyncGenerator<Call, void, Captured> {
  const ok = (operationId: string, name: string, key: Call['key'], url: string, extra: Partial<Call> = {}): Call => {
    const op = opOf(operationId);
    return { operationId, name, key, method: op?.method ?? 'get', url, status: op?.status ?? 200, ...extra };
  };
  const fail = (operationId: string, code: string, status: number, key: Call['key'], url: string, extra: Partial<Call> = {}): Call =>
    ({ operationId, name: code, key, method: opOf(operationId)?.method ?? 'get', url, status, ...extra });

  // keys, with the errors of issuing one
  const email = `ada+${Date.now()}@example.test`;
  yield ok('postAuthFreeKey', 'issued', null, '/v1/auth/free-key', { body: { email, customer_name: 'Ada Analytics' } });
  yield fail('postAuthFreeKey', 'conflict', 409, null, '/v1/auth/free-key', { body: { email } });
  yield fail('postAuthFreeKey', 'validation_error_body', 400, null, '/v1/auth/free-key', { body: { email: 'not-an-email' } });

  // rates
  yield ok('getRatesLive', 'free', 'free', '/v1/rates/live?pairs=BTCNGN,BTCZAR');
  yield ok('getRatesLive', 'builder', 'builder', '/v1/rates/live?pairs=BTCNGN,BTCKES&include_synthetic=true&include_sources=true');
  yield ok('getRatesLive', 'enterprise', 'enterprise', '/v1/rates/live?pairs=BTCNGN&include_audit=true');
  yield fail('getRatesLive', 'tier_restricted_parameter', 403, 'free', '/v1/rates/live?pairs=BTCNGN&include_sources=true');
  const idle = [...t.api.deps.pairs.keys()].find((p) => !t.api.deps.snapshot.get(p));
  if (idle) yield fail('getRatesLive', 'service_unavailable', 503, 'free', `/v1/rates/live?pairs=${idle}`);
  yield ok('getRatesMarkets', 'builder', 'builder', '/v1/rates/markets');
  yield ok('getRatesHistorical', 'free', 'free', `/v1/rates/historical?pair=BTCNGN&start=${day(-1)}&end=${day(0)}&limit=2`);
  yield ok('getRatesHistorical', 'builder', 'builder', `/v1/rates/historical?pair=BTCZAR&start=${day(-1)}&end=${day(0)}&interval=5m&limit=2`);
  yield fail('getRatesHistorical', 'interval_not_available', 403, 'free', `/v1/rates/historical?pair=BTCNGN&start=${day(0)}&end=${day(0)}&interval=5m`);
  yield fail('getRatesHistorical', 'history_limit_exceeded', 403, 'free', `/v1/rates/historical?pair=BTCNGN&start=${day(-45)}&end=${day(0)}`);
  yield ok('getRatesEod', 'example', 'free', `/v1/rates/eod?pair=BTCNGN&date=${day(-1)}`);
  yield fail('getRatesEod', 'not_found', 404, 'free', '/v1/rates/eod?pair=BTCNGN&date=2020-01-02');
  yield ok('getRatesSpread', 'example', 'builder', '/v1/rates/spread?pair=BTCZAR');
  yield ok('getPremium', 'example', 'builder', `/v1/premium?pair=BTCNGN&start=${day(0)}&end=${day(0)}&interval=1d`);
  yield ok('getIndices', 'example', 'builder', '/v1/indices');
  yield ok('getPairs', 'example', 'free', '/v1/pairs');
  yield ok('getStatus', 'example', 'free', '/v1/status');
  yield ok('getHealth', 'example', null, '/v1/health');

  // certificates (the newest BTCNGN one restated by late trades: its list entry links the restatement)
  await restateLate(t, 'BTCNGN');
  yield ok('getCertificatesKeys', 'example', null, '/v1/certificates/keys');
  const list = yield ok('getCertificatesPair', 'example', 'enterprise', '/v1/certificates/BTCNGN?limit=2');
  yield fail('getCertificatesPair', 'tier_restricted', 403, 'builder', '/v1/certificates/BTCNGN');
  const first = (list.value as { certificates: { timestamp: string }[] }).certificates[0];
  if (first) {
    yield ok('getCertificatesPairTimestamp', 'example', 'enterprise', `/v1/certificates/BTCNGN/${encodeURIComponent(first.timestamp)}`);
    yield ok('getCertificatesPairTimestampBundle', 'example', 'enterprise', `/v1/certificates/BTCNGN/${encodeURIComponent(first.timestamp)}/bundle`);
  }

  // the transparency log: the certificates issued above, logged as they were issued, and a signed head
  if (!(await latestHead(t.db.sql))) await publishHead(t.db.sql, (p) => ({ signature: t.api.deps.signer.ed25519(p), keyId: t.api.deps.signer.keyId }), new Date());
  const head = (yield ok('getTransparencyHead', 'example', null, '/v1/transparency/head')).value as { tree_size: number };
  yield ok('getTransparencyHeads', 'example', null, `/v1/transparency/heads?date=${day(0)}`);
  const [logged] = await t.db.sql<{ entry_id: string }[]>`SELECT entry_id FROM transparency_entries WHERE leaf_index = ${Math.floor(head.tree_size / 2)}`;
  yield ok('getTransparencyProofInclusion', 'example', null, `/v1/transparency/proof/inclusion?id=${encodeURIComponent(logged!.entry_id)}`);
  yield ok('getTransparencyProofConsistency', 'example', null, `/v1/transparency/proof/consistency?first=${Math.ceil(head.tree_size / 3)}&second=${head.tree_size}`);

  // fixings (yesterday's: both have settled) and restatements
  yield ok('getFixings', 'example', 'free', `/v1/fixings?pair=BTCNGN&date=${day(-1)}`);
  yield ok('getFixingsPairDate', 'example', 'builder', `/v1/fixings/BTCNGN/${day(-1)}`);
  yield ok('getFixingsPairDate', 'enterprise', 'enterprise', `/v1/fixings/BTCZAR/${day(-1)}`);
  yield ok('getFixingsPairDateKindBundle', 'example', 'enterprise', `/v1/fixings/BTCNGN/${day(-1)}/local/bundle`);
  yield fail('getFixingsPairDate', 'not_found', 404, 'free', '/v1/fixings/BTCNGN/2020-01-02');
  yield ok('getRestatements', 'example', 'free', '/v1/restatements?pair=BTCNGN');
  yield ok('getMethodology', 'example', null, '/v1/methodology');

  // the account of one key, and its other keys
  if (opOf('getAccount')) {
    const own = { apiKey: await t.key('free'), tier: 'free' as const };
    yield ok('getAccount', 'example', own, '/v1/account');
    const a = yield ok('postAccountKeys', 'example', own, '/v1/account/keys', { body: { label: 'staging' } });
    const b = yield ok('postAccountKeys', 'unlabelled', own, '/v1/account/keys', { body: {} });
    yield ok('getAccountKeys', 'example', own, '/v1/account/keys');
    yield ok('postAccountKeysIdRotate', 'example', own, `/v1/account/keys/${(a.value as { key: { id: number } }).key.id}/rotate`);
    yield ok('deleteAccountKeysId', 'example', own, `/v1/account/keys/${(b.value as { key: { id: number } }).key.id}`);
  }

  // webhooks: an endpoint registered, sent a test event, its deliveries, its secret rotated, changed, deleted
  if (opOf('postAccountWebhooks')) {
    const own = { apiKey: await t.key('professional'), tier: 'professional' as const };
    const body = { url: 'https://hooks.example.com/afrates', events: ['pair.divergence', 'source.failing', 'restatement'], description: 'treasury alerts', divergence_pct: 1.5, pairs: ['BTCNGN', 'USDTNGN'] };
    const made = yield ok('postAccountWebhooks', 'example', own, '/v1/account/webhooks', { body });
    const id = (made.value as { endpoint: { id: number } }).endpoint.id;
    yield fail('postAccountWebhooks', 'validation_error_webhook_url', 400, own, '/v1/account/webhooks', { body: { url: 'https://169.254.169.254/latest/meta-data/', events: ['restatement'] } });
    yield ok('getAccountWebhooks', 'example', own, '/v1/account/webhooks');
    yield ok('postAccountWebhooksIdTest', 'example', own, `/v1/account/webhooks/${id}/test`);
    await deliverOnce(t);
    yield ok('getAccountWebhooksIdDeliveries', 'example', own, `/v1/account/webhooks/${id}/deliveries?limit=5`);
    yield ok('postAccountWebhooksIdRotateSecret', 'example', own, `/v1/account/webhooks/${id}/rotate-secret`);
    yield ok('postAccountWebhooksId', 'example', own, `/v1/account/webhooks/${id}`, { body: { events: ['pair.divergence', 'pair.stale', 'heartbeat'], stale_seconds: 900 } });
    yield ok('deleteAccountWebhooksId', 'example', own, `/v1/account/webhooks/${id}`);
  }

  // the errors every keyed operation shares
  yield fail('getPairs', 'unauthorized', 401, null, '/v1/pairs');
  yield fail('getRatesHistorical', 'validation_error', 400, 'free', `/v1/rates/historical?pair=BTCNGN&start=${day(0)}&end=${day(0)}&interval=2h`);
  const busy = { apiKey: await t.key('free'), tier: 'free' as const };
  for (let i = 0; i < 30; i++) {
    if ((yield fail('getRatesLive', 'rate_limit_exceeded', 429, busy, '/v1/rates/live?pairs=BTCNGN', { until: true })).status === 429) break;
  }
  const spent = { apiKey: await t.key('free'), tier: 'free' as const };
  const customer = await t.api.deps.keys.authenticate(spent.apiKey);
  await t.db.sql`INSERT INTO api_usage (customer, month, requests) VALUES (${customer!.id}, date_trunc('month', now())::date, 5000)`;
  yield fail('getPairs', 'monthly_quota_exceeded', 429, spent, '/v1/pairs');
  yield fail('getRatesLive', 'method_not_allowed', 405, 'free', '/v1/rates/live', { method: 'delete' });
  yield fail('getHealth', 'header_fields_too_large', 431, null, '/v1/health', { headers: { 'X-Padding': 'x'.repeat(20_000) } });

  // anything else: a call made from its schemas
  for (const op of operations) {
    if (opOf(operationIdOf(op)) !== op) continue;
    const done = captured.has(operationIdOf(op));
    if (done) continue;
    const call = derivedCall(op);
    if (!call) throw new Error(`no example call for ${operationIdOf(op)}: add one to callsFor() in test/support/openapi-examples.ts`);
    yield call;
  }
}

/**
 * How webhook hosts resolve for the examples' API: the example's host to a public address (there is
 * no DNS here). The delivery worker resolves it to a private one, so the example delivery shows an
 * attempt refused at delivery time (as when a host's DNS is changed to point inside a network).
 */
export const EXAMPLE_WEBHOOK_LOOKUP: Lookup = async (host) => [{ address: host === 'hooks.example.com' ? '93.184.215.14' : '192.0.2.1', family: 4 }];
const REBOUND_LOOKUP: Lookup = async () => [{ address: '10.0.0.7', family: 4 }];

/** One pass of the delivery worker, as the service runs it. */
async function deliverOnce(t: TestApi): Promise<void> {
  const worker = new WebhookWorker({ sql: t.db.sql, log: testLog, secrets: t.api.deps.webhookSecrets, allowPrivate: false, lookup: REBOUND_LOOKUP });
  await worker.runOnce();
  await worker.stop();
}

/**
 * Restatements as the pipeline records them: late trades, at 3 % above the value, arrive for two of
 * the pair's published values: its newest certified bucket (as large as its volume: the certificate
 * list's first entry links the restatement) and the first bucket of its newest fixing still within
 * the restatement window (as large as the window's volume: a fixing's record, with its fixing_id,
 * whatever the hour; the newest bucket lies in a fixing's window only at some hours, so without it
 * the restatement examples would change shape with the time of day). The fixing's trade goes into
 * its window's first bucket, an hour before the fixing: never one of the list's two newest
 * certificates, so the list shows one restated entry and one not at any hour. The aggregates are refreshed and the
 * restatement check run.
 */
async function restateLate(t: TestApi, pair: string): Promise<void> {
  const sql = t.db.sql;
  const [clock] = await sql<{ since: Date }[]>`SELECT now() AS since`; // noticed_at's clock
  const since = clock!.since;
  const [newest] = await sql<{ bucket: Date; vwap: string; volume: string }[]>`
    SELECT c.bucket, (c.pv / c.volume)::text AS vwap, c.volume::text AS volume
    FROM certificates k JOIN candles c ON c.pair = k.pair AND c.interval = '5m' AND c.bucket = k.bucket
    WHERE k.pair = ${pair} ORDER BY k.bucket DESC LIMIT 1`;
  // as much again as the fixing's whole window at 3 % above its rate: a change of about 1.5 %
  const [fixing] = await sql<{ first: Date; rate: string; volume: string }[]>`
    SELECT min(c.bucket) AS first, f.rate::text AS rate, sum(c.volume)::text AS volume
    FROM fixings f JOIN candles c ON c.pair = f.pair AND c.interval = '5m'
      AND c.bucket >= (f.body::jsonb -> 'fixing' ->> 'window_start')::timestamptz AND c.bucket < f.time
    WHERE f.pair = ${pair} AND f.rate IS NOT NULL AND f.time > ${since} - make_interval(hours => ${param('restatement_window_hours')})
    GROUP BY f.time, f.rate ORDER BY f.time DESC LIMIT 1`;
  const late = [
    ...(newest ? [{ time: new Date(newest.bucket.getTime() + 120_000), price: newest.vwap, amount: newest.volume }] : []),
    ...(fixing ? [{ time: new Date(fixing.first.getTime() + 60_000), price: fixing.rate, amount: fixing.volume }] : []),
  ];
  for (const l of late) {
    await insertTrades(sql, [{ time: l.time, exchange: 'quidax', pair, tradeId: `late-${l.time.getTime()}`, price: (Number(l.price) * 1.03).toFixed(2), amount: l.amount, side: 'buy' }]);
    await recordLateTrades(sql, 'quidax', pair, 1, l.time);
  }
  await refreshAggregates(sql);
  await restate(sql, since, new Date(), logRestatement);
}

// operationIds with a success captured so far, for the derived calls at the end
const captured = new Set<string>();

/** The first event's data of a Server-Sent Events response. */
async function firstEvent(res: Response, refresh: () => Promise<void>): Promise<unknown> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  // open now (it answered): a stream that waits for the next refresh gets one, one that has sent
  // its first event already sends this one after it
  void refresh();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before its first event');
      text += value;
      const data = /^data: (.*)$/m.exec(text);
      if (data && text.includes('\n\n', data.index)) return JSON.parse(data[1]!);
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

async function send(t: TestApi, call: Call): Promise<Captured> {
  const apiKey = call.key === null ? null : typeof call.key === 'string' ? await t.key(call.key) : call.key.apiKey;
  const headers: Record<string, string> = { ...(apiKey ? { 'X-API-Key': apiKey } : {}), ...(call.body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...call.headers };
  const res = await fetch(`${t.api.url}${call.url}`, { method: call.method.toUpperCase(), headers, body: call.body === undefined ? undefined : JSON.stringify(call.body) });
  const responseHeaders = Object.fromEntries(res.headers.entries());
  const value =
    res.status < 300 && responseHeaders['content-type']?.startsWith('text/event-stream')
      ? await firstEvent(res, () => t.api.deps.snapshot.refresh())
      : isFile({ status: res.status, responseHeaders })
        ? void (await res.arrayBuffer())
        : await res.json();
  if (res.status !== call.status && !(call.until && res.status === 200)) throw new Error(`${call.method.toUpperCase()} ${call.url}: expected ${call.status}, got ${res.status} ${JSON.stringify(value)}`);
  if (res.status < 300) captured.add(call.operationId);
  return { ...call, status: res.status, headers, responseHeaders, value };
}

/** Makes every call against the running test API. */
export async function captureAll(t: TestApi): Promise<Captured[]> {
  captured.clear();
  const out: Captured[] = [];
  const calls = callsFor(t);
  let next = await calls.next();
  while (!next.done) {
    const answer = await send(t, next.value);
    out.push(answer);
    next = await calls.next(answer);
  }
  return out;
}

const who = (key: Call['key']) => (key === null ? 'no key' : `${tierLabel(typeof key === 'string' ? key : key.tier)} key`);
const summaryOf = (c: Call) => `${c.method.toUpperCase()} ${c.url.length > 120 ? `${c.url.slice(0, 120)}...` : c.url} (${who(c.key)})`;

/** What the document shows: one example per success call and per error code. */
export function examplesFrom(all: readonly Captured[]): ExamplesFile {
  const responses: Record<string, Record<string, Example>> = {};
  const requests: Record<string, Record<string, Example>> = {};
  const errors: Record<string, Example> = {};
  for (const c of all) {
    if ((c.until && c.status < 300) || isFile(c)) continue;
    if (c.status >= 400) {
      errors[c.name] = { summary: summaryOf(c), value: c.value };
      continue;
    }
    (responses[c.operationId] ??= {})[c.name] = { summary: summaryOf(c), value: c.value };
    if (c.body !== undefined) (requests[c.operationId] ??= {})[c.name] = { summary: summaryOf(c), value: c.body };
  }
  return { about: 'Real responses of the test API, written by `make openapi-examples` (test/support/openapi-examples.ts); do not edit by hand.', responses, requests, errors };
}

/**
 * Whether two examples show the same of the API, the moment's values aside: the same structure,
 * each value of the same type, and the same text where the API writes text (an error's `error` and
 * `message`, an example's summary) once its numbers and random tokens (keys, hashes, ids) are
 * blanked. So times, prices, ids, and which venue or pair a moment's data name, make no
 * difference, while a renamed field, a new one or reworded message text does. A null matches any
 * value, and an empty list any list (whether a moment has a value, or rows, is data); lists match
 * when their elements do, element for element of the shorter against every kind of the longer.
 */
export function sameShape(a: unknown, b: unknown, key = 'summary'): boolean {
  if (a === null || b === null) return true;
  if (typeof a === 'string' && typeof b === 'string') return !['summary', 'error', 'message'].includes(key) || blank(a) === blank(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.every((x) => b.length === 0 || b.some((y) => sameShape(x, y, key))) && b.every((y) => a.length === 0 || a.some((x) => sameShape(x, y, key)));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && sameShape(a[k], b[k], k));
  }
  return typeof a === typeof b && Array.isArray(a) === Array.isArray(b);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const blank = (text: string) =>
  text
    .replace(/\b(afr_live_|whsec_)[A-Za-z0-9_-]*/g, '$1~')
    .replace(/[A-Za-z0-9+/=_-]{16,}/g, '~')
    .replace(/\d+/g, '#');

/**
 * The examples to write: each one the file already has, unless this run's differs in shape (the API
 * changed), so `make openapi-examples` rewrites the file only where the API did, not every
 * timestamp and id of it each run. Examples this run no longer makes are gone.
 */
export function keepUnchanged(old: ExamplesFile | null, fresh: ExamplesFile): ExamplesFile {
  const keep = (before: Readonly<Record<string, Example>> | undefined, now: Readonly<Record<string, Example>>) =>
    Object.fromEntries(Object.entries(now).map(([name, e]) => [name, before?.[name] && sameShape(before[name], e) ? before[name] : e]));
  const each = (before: ExamplesFile['responses'] | undefined, now: ExamplesFile['responses']) => Object.fromEntries(Object.entries(now).map(([id, r]) => [id, keep(before?.[id], r)]));
  return { ...fresh, responses: each(old?.responses, fresh.responses), requests: each(old?.requests, fresh.requests), errors: keep(old?.errors, fresh.errors) };
}

async function main(): Promise<void> {
  const t = await startTestApi({ hours: 52, fixings: true, webhookLookup: EXAMPLE_WEBHOOK_LOOKUP }); // two days and more: ACLI's change against a day earlier is known
  try {
    const old = fs.existsSync(EXAMPLES_FILE) ? (JSON.parse(fs.readFileSync(EXAMPLES_FILE, 'utf8')) as ExamplesFile) : null;
    const examples = keepUnchanged(old, examplesFrom(await captureAll(t)));
    fs.writeFileSync(EXAMPLES_FILE, `${JSON.stringify(examples, null, 2)}\n`);
    const count = Object.values(examples.responses).reduce((n, r) => n + Object.keys(r).length, 0);
    console.log(`${path.relative(process.cwd(), EXAMPLES_FILE)}: ${count} responses of ${Object.keys(examples.responses).length} operations, ${Object.keys(examples.errors).length} errors`);
  } finally {
    await t.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
