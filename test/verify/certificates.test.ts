// Certificates verified by someone who trusts none of our code: seeded random trades (tiny and
// huge amounts, prices with many decimals, one venue and several, an outlier among three) played
// by the simulated venues as exact decimal strings, collected by the real pipeline (ccxt), settled
// and certified, fetched over HTTP, then checked by the two verifiers in verify/ (Node's and
// Debian's Python) as programs. The bundle must recompute to exactly the signed string, the rate
// must be the test's own exact VWAP of the trades it wrote, and each verifier must fail, naming
// the check, for a tampered bundle or certificate. A certificate and its bundle stay the same bytes
// through compression, retention and late trades, and still verify.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { configureRetention, runStorageJobs } from '../../pipeline/maintenance.js';
import type { Pipeline } from '../../pipeline/runner.js';
import { insertFxRates, insertTrades } from '../../pipeline/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { rng } from '../support/market.js';
import { SimWorld } from '../support/pipeline.js';
import { both, canonical, requirePythonCryptography, vwapText, VERIFIERS } from './support.js';

const MIN = 60_000;
const BUCKET = 5 * MIN;
const T0 = Date.UTC(2026, 10, 20, 10, 0, 0);
const BUCKETS = 6;

interface Market {
  readonly pair: string;
  readonly venues: readonly string[];
  /** price level in the quote currency */
  readonly level: number;
  readonly certified: boolean;
}
const MARKETS: readonly Market[] = [
  { pair: 'BTCZAR', venues: ['binance', 'luno', 'valr'], level: 1_627_000, certified: true },
  { pair: 'BTCNGN', venues: ['luno', 'quidax'], level: 142_519_000, certified: true },
  { pair: 'USDTNGN', venues: ['luno', 'quidax'], level: 1_583, certified: true },
  { pair: 'ETHZAR', venues: ['valr'], level: 58_000, certified: true },
  // the synthetic price's USDT legs (internal pairs: never certified)
  { pair: 'BTCUSDT', venues: ['binance'], level: 90_000, certified: false },
  { pair: 'ETHUSDT', venues: ['binance'], level: 3_200, certified: false },
];

interface Trade {
  venue: string;
  pair: string;
  time: number;
  id: string;
  price: string;
  amount: string;
  side: 'buy' | 'sell';
}

/** What the test designed for one certified bucket: the venues whose trades make the rate, and those left out. */
interface Expected {
  readonly pair: string;
  readonly bucket: number;
  readonly trades: readonly Trade[];
  /** venues whose trades reach us only after the bucket settled (they are not in its bundle) */
  readonly late: readonly string[];
  readonly used: readonly string[];
  readonly excluded: readonly { exchange: string; reason: string }[];
}

const random = rng(2023);
const int = (n: number) => Math.floor(random() * n);

/** A price near `level` with up to 15 significant digits (as many decimals as fit). */
function priceNear(level: number): string {
  const v = level * (1 + (random() - 0.5) * 0.01);
  const whole = Math.floor(Math.log10(v)) + 1;
  return v.toFixed(Math.max(0, Math.min(15 - whole, int(16 - whole))));
}

/** Tiny (a few satoshi), huge (eight whole digits, fifteen significant) or ordinary. */
function amount(): string {
  const kind = random();
  if (kind < 0.2) return `0.${String(1 + int(9_999)).padStart(8, '0')}`;
  if (kind < 0.35) return `${10_000_000 + int(89_999_999)}.${String(int(10_000_000)).padStart(7, '0')}`;
  return (0.001 + random() * 3).toFixed(1 + int(8));
}

/**
 * The market: per bucket and pair, which venues trade (forced for the cases below, else at random
 * with at least one per certified pair) and their trades. Buckets 1 and 4: BTCZAR on all three
 * venues, one of them 25% off (an outlier). Bucket 2: BTCZAR on VALR alone. Bucket 3: BTCNGN on
 * Luno alone. Bucket 5: no BTC/USDT trade (no synthetic price for BTC pairs), and Quidax is down
 * from its start until it settles by the lag: its NGN trades arrive late, it is reported stale.
 */
function design(): { trades: Trade[]; expected: Expected[] } {
  const trades: Trade[] = [];
  const expected: Expected[] = [];
  for (let b = 0; b < BUCKETS; b++) {
    const bucket = T0 + b * BUCKET;
    for (const m of MARKETS) {
      let trading = m.venues.filter(() => random() < 0.75);
      if (m.certified && trading.length === 0) trading = [m.venues[int(m.venues.length)]!];
      let outlier: string | undefined;
      if (m.pair === 'BTCZAR' && (b === 1 || b === 4)) {
        trading = [...m.venues];
        outlier = m.venues[int(3)];
      }
      if (m.pair === 'BTCZAR' && b === 2) trading = ['valr'];
      if (m.pair === 'BTCNGN' && b === 3) trading = ['luno'];
      if (m.pair === 'BTCUSDT' && b === 5) trading = [];
      const late = b === 5 && m.venues.includes('quidax') ? ['quidax'] : [];
      if (late.length) trading = [...m.venues];
      const bucketTrades: Trade[] = [];
      for (const venue of trading) {
        const n = 1 + int(4);
        const level = venue === outlier ? m.level * (random() < 0.5 ? 1.25 : 0.75) : m.level;
        for (let i = 0; i < n; i++) {
          bucketTrades.push({ venue, pair: m.pair, time: bucket + int(BUCKET), id: '', price: priceNear(level), amount: amount(), side: random() < 0.5 ? 'buy' : 'sell' });
        }
      }
      trades.push(...bucketTrades);
      if (!m.certified) continue;
      const used = trading.filter((v) => v !== outlier && !late.includes(v)).sort();
      const excluded = m.venues
        .filter((v) => v === outlier || late.includes(v) || !trading.includes(v))
        .map((v) => ({ exchange: v, reason: v === outlier ? 'outlier' : late.includes(v) ? 'stale' : 'no_trades' }))
        .sort((a, b) => (a.exchange < b.exchange ? -1 : 1));
      expected.push({ pair: m.pair, bucket, trades: bucketTrades, late, used, excluded });
    }
  }
  // ids rise with time on each venue's book (Binance pages by id)
  trades.sort((a, b) => a.time - b.time);
  let id = 1000;
  for (const t of trades) t.id = String(id++);
  return { trades, expected };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-verify-'));
const market = design();
const replay = path.join(dir, 'market.jsonl');
fs.writeFileSync(replay, `${market.trades.map((t) => JSON.stringify({ ...t, time: new Date(t.time).toISOString() })).join('\n')}\n`);

const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay });
let api: TestApi;
let pipeline: Pipeline;
let hmacSecret: string;
const keysFile = path.join(dir, 'keys.json');

interface BundleTrade {
  exchange: string;
  trade_id: string;
  price: string;
  amount: string;
}

/** A decimal string without the zeros that do not change its value. */
const decimalValue = (s: string) => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
const certPath = (pair: string, bucket: number) => `/v1/certificates/${pair}/${encodeURIComponent(stamp(bucket))}`;

async function fetchBytes(urlPath: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(`${api.api.url}${urlPath}`, { headers: { 'X-API-Key': api.keys.enterprise } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

interface Saved {
  readonly cert: string;
  readonly bundle: string;
  readonly certBytes: Buffer;
  readonly bundleBytes: Buffer;
}

/** Fetches a certificate and its bundle over HTTP and saves both as files, as a customer would. */
async function save(pair: string, bucket: number, tag = ''): Promise<Saved> {
  const cert = await fetchBytes(certPath(pair, bucket));
  const bundle = await fetchBytes(`${certPath(pair, bucket)}/bundle`);
  expect(cert.status, `${pair} ${stamp(bucket)}`).toBe(200);
  expect(bundle.status, `${pair} ${stamp(bucket)} bundle`).toBe(200);
  const base = path.join(dir, `${pair}-${bucket}${tag}`);
  fs.writeFileSync(`${base}.cert.json`, cert.bytes);
  fs.writeFileSync(`${base}.bundle.json`, bundle.bytes);
  return { cert: `${base}.cert.json`, bundle: `${base}.bundle.json`, certBytes: cert.bytes, bundleBytes: bundle.bytes };
}

const fileArgs = (s: { cert: string; bundle: string }, extra: string[] = []) => ['--certificate', s.cert, '--bundle', s.bundle, '--keys', keysFile, ...extra];

beforeAll(async () => {
  requirePythonCryptography();
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  // FX in force for the hour of the buckets: NGN from two fresh sources (their median is their
  // mean), ZAR from one fresh source beside one too old to count
  const at = new Date(T0 - 30 * MIN);
  await insertFxRates(w.db.sql, [
    { time: at, currency: 'NGN', unitsPerUsd: 1530.25, source: 'coinbase', sourceUpdatedAt: at },
    { time: at, currency: 'NGN', unitsPerUsd: 1528.5, source: 'exchangerate_api', sourceUpdatedAt: new Date(T0 - 20 * 60 * MIN) },
    { time: at, currency: 'ZAR', unitsPerUsd: 18.0625, source: 'coinbase', sourceUpdatedAt: at },
    { time: at, currency: 'ZAR', unitsPerUsd: 17.5, source: 'exchangerate_api', sourceUpdatedAt: new Date(T0 - 40 * 60 * MIN) },
  ]);
  // the market trades for BUCKETS buckets; every venue collects each minute until all are certified
  // (Quidax down from the last bucket's start until then)
  const wanted = market.expected.length;
  for (let i = 0; i < BUCKETS * 5 + 20; i++) {
    await w.minutes(pipeline, 1);
    if (w.clock === T0 + (BUCKETS - 1) * BUCKET) w.sim.setFault('quidax', { kind: 'server_error' });
    const [{ n } = { n: 0 }] = await w.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM certificates WHERE bucket >= ${new Date(T0)} AND bucket < ${new Date(T0 + BUCKETS * BUCKET)}`;
    if (n >= wanted) break;
  }
  w.sim.setFault('quidax', null);
  hmacSecret = fs.readFileSync(path.join(w.dir, 'keys', 'cert-hmac.secret'), 'utf8');
  const keys = await fetch(`${api.api.url}/v1/certificates/keys`);
  expect(keys.status).toBe(200);
  fs.writeFileSync(keysFile, Buffer.from(await keys.arrayBuffer()));
}, 300_000);

afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('certificates verified independently', () => {
  const saved = new Map<string, Saved>();
  const key = (e: { pair: string; bucket: number }) => `${e.pair} ${stamp(e.bucket)}`;
  // a BTCZAR bucket with an outlier: three venues, a synthetic price, every field in play
  const target = () => market.expected.find((e) => e.pair === 'BTCZAR' && e.bucket === T0 + BUCKET)!;
  const other = () => market.expected.find((e) => e.pair === 'BTCZAR' && e.bucket === T0 + 4 * BUCKET)!;

  it('certifies every designed bucket; both verifiers recompute each rate to the signed string, which is the exact VWAP of the trades written', async () => {
    const [{ n } = { n: 0 }] = await w.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM certificates WHERE bucket >= ${new Date(T0)} AND bucket < ${new Date(T0 + BUCKETS * BUCKET)}`;
    expect(n).toBe(market.expected.length);
    const cases = { outlier: 0, stale: 0, single: 0, several: 0, tiny: 0, huge: 0 };
    for (const e of market.expected) {
      const s = await save(e.pair, e.bucket);
      saved.set(key(e), s);
      const cert = JSON.parse(s.certBytes.toString('utf8'));
      const bundle = JSON.parse(s.bundleBytes.toString('utf8'));
      const label = key(e);

      // the test's own ground truth: the trades it wrote, as the venues sent them
      const mine = e.trades.filter((t) => e.used.includes(t.venue));
      const rate = vwapText(mine);
      expect(cert.audit.signed_payload, label).toContain(`"rate":"${rate}"`);
      expect(cert.data.rate, label).toBe(Number(rate));
      expect(cert.data.sources, label).toEqual(e.used);
      expect(cert.inputs.excluded, label).toEqual(e.excluded);
      // the same decimals (a trailing zero the venue sent is not kept: "142592521.870" is stored as 142592521.87)
      const written = e.trades.filter((t) => !e.late.includes(t.venue)).map((t) => `${t.venue} ${t.id} ${decimalValue(t.price)} ${decimalValue(t.amount)}`).sort();
      const stored = (bundle.trades as { exchange: string; trade_id: string; price: string; amount: string }[]).map((t) => `${t.exchange} ${t.trade_id} ${decimalValue(t.price)} ${decimalValue(t.amount)}`).sort();
      expect(stored, `${label}: the bundle holds the trades the venues sent`).toEqual(written);

      const run = await both(fileArgs(s, ['--hmac-secret', hmacSecret]));
      expect(run.node.code, `${label}\n${run.node.stdout}${run.node.stderr}`).toBe(0);
      expect(run.python.code, `${label}\n${run.python.stdout}${run.python.stderr}`).toBe(0);
      expect(run.node.rate, label).toBe(rate);
      expect(run.node.checks.get('hmac')).toBe('ok');
      // from files without a head and proof, the log is not checked (test/verify/log.test.ts checks it)
      expect(run.node.checks.get('log inclusion')).toBe('skip');
      expect([...run.node.checks].filter(([name]) => !name.startsWith('log ')).every(([, c]) => c === 'ok'), run.node.stdout).toBe(true);

      if (e.excluded.some((x) => x.reason === 'outlier')) cases.outlier++;
      if (e.excluded.some((x) => x.reason === 'stale')) cases.stale++;
      if (e.used.length === 1) cases.single++;
      if (e.used.length > 1) cases.several++;
      if (mine.some((t) => /^0\.0000/.test(t.amount))) cases.tiny++;
      if (mine.some((t) => /^\d{8}\./.test(t.amount))) cases.huge++;
    }
    // the design's cases all happened
    expect(cases.outlier).toBe(2);
    expect(cases.stale).toBe(2);
    for (const [name, count] of Object.entries(cases)) expect(count, name).toBeGreaterThan(0);
  });

  it('from saved files without the log head and proof, or the HMAC secret, says which checks it did not make', async () => {
    const s = saved.values().next().value!;
    const [without, withSecret] = await Promise.all([both(fileArgs(s)), both(fileArgs(s, ['--hmac-secret', hmacSecret]))]);
    for (const v of VERIFIERS) {
      expect(without[v].code, without[v].stdout).toBe(0);
      const last = without[v].stdout.trim().split('\n').at(-1);
      expect(last, v).toMatch(/^result: ok, every check made holds; not checked: /);
      for (const skipped of ['hmac', 'log head', 'log inclusion']) expect(last!.split('not checked: ')[1]!.split(', '), v).toContain(skipped);
      expect(withSecret[v].stdout.trim().split('\n').at(-1), v).toBe('result: ok, every check made holds; not checked: log head, log inclusion');
    }
  });

  describe('fails, naming what failed', () => {
    /** The saved certificate and bundle, with one of them replaced by `change` (a new file). */
    function tampered(what: 'cert' | 'bundle', change: (text: string) => string): Saved {
      const s = saved.get(key(target()))!;
      const text = fs.readFileSync(s[what], 'utf8');
      const changed = change(text);
      expect(changed).not.toBe(text);
      const file = `${s[what]}.tampered-${Math.random().toString(36).slice(2)}`;
      fs.writeFileSync(file, changed);
      return { ...s, [what]: file };
    }

    async function expectFailure(s: Saved, named: string[]) {
      const run = await both(fileArgs(s, ['--hmac-secret', hmacSecret]));
      for (const v of VERIFIERS) {
        expect(run[v].code, `${v}\n${run[v].stdout}${run[v].stderr}`).toBe(1);
        for (const n of named) expect(run[v].failed, `${v} names ${n}\n${run[v].stdout}`).toContain(n);
        expect(run[v].stdout).toMatch(/^result: FAIL \(/m);
      }
      return run.node;
    }

    /** The trade that weighs most in the rate (the largest amount of a venue that entered it), as the bundle holds it. */
    function heaviest(bundleText: string): BundleTrade {
      const e = target();
      const trades = (JSON.parse(bundleText).trades as BundleTrade[]).filter((t) => e.used.includes(t.exchange));
      return trades.reduce((a, b) => (Number(b.amount) > Number(a.amount) ? b : a));
    }

    it('a trade whose price changed in the bundle', async () => {
      const s = tampered('bundle', (text) => {
        const t = heaviest(text);
        // that trade's object, re-written with a price 10% higher: the bundle stays canonical JSON
        return text.replace(canonical(t), canonical({ ...t, price: (Number(t.price) * 1.1).toFixed(2) }));
      });
      const run = await expectFailure(s, ['bundle hash', 'rate']);
      expect(run.checks.get('bundle canonical')).toBe('ok');
      expect(run.stdout).toMatch(/^FAIL rate: recomputed \S+, signed "/m);
    });

    it('a trade removed from the bundle', async () => {
      const s = tampered('bundle', (text) => {
        const t = heaviest(text);
        const bundle = JSON.parse(text);
        bundle.trades = bundle.trades.filter((x: BundleTrade) => x.trade_id !== t.trade_id);
        return canonical(bundle);
      });
      const run = await expectFailure(s, ['bundle hash', 'rate', 'venues']);
      expect(run.checks.get('bundle canonical')).toBe('ok');
    });

    it("the certificate's rate changed (data.rate and the signed payload)", async () => {
      const cert = JSON.parse(fs.readFileSync(saved.get(key(target()))!.cert, 'utf8'));
      const rate: string = JSON.parse(cert.audit.signed_payload).rate;
      const changed = rate.replace(/\d$/, (d) => String((Number(d) + 1) % 10));
      const s = tampered('cert', (text) => text.replace(`"rate":${cert.data.rate}`, `"rate":${Number(changed)}`).replace(`\\"rate\\":\\"${rate}\\"`, `\\"rate\\":\\"${changed}\\"`));
      await expectFailure(s, ['certificate signature', 'payload signature', 'hmac', 'rate']);
    });

    it('a signature changed', async () => {
      const flip = (sig: string) => (sig[5] === 'A' ? 'B' : 'A');
      const cert = JSON.parse(fs.readFileSync(saved.get(key(target()))!.cert, 'utf8'));
      const sig: string = cert.audit.certificate_signature;
      const run = await expectFailure(
        tampered('cert', (text) => text.replace(sig, `${sig.slice(0, 5)}${flip(sig)}${sig.slice(6)}`)),
        ['certificate signature'],
      );
      expect(run.checks.get('payload signature')).toBe('ok');
      const payloadSig: string = cert.audit.ed25519_signature;
      // the certificate signature covers the payload signature too
      await expectFailure(tampered('cert', (text) => text.replace(payloadSig, `${payloadSig.slice(0, 5)}${flip(payloadSig)}${payloadSig.slice(6)}`)), ['payload signature', 'certificate signature']);
      const hmac: string = cert.audit.signature;
      await expectFailure(tampered('cert', (text) => text.replace(hmac, `${hmac.slice(0, 5)}${hmac[5] === 'a' ? 'b' : 'a'}${hmac.slice(6)}`)), ['hmac', 'certificate signature']);
    });

    it('the bundle of another certificate', async () => {
      const s = { ...saved.get(key(target()))!, bundle: saved.get(key(other()))!.bundle };
      const run = await expectFailure(s, ['bundle hash', 'bundle identity']);
      expect(run.stdout).toMatch(/^FAIL bundle identity: bundle of "CERT-BTCZAR-20261120T102000Z", not of "CERT-BTCZAR-20261120T100500Z"/m);
    });

    it('keys not given, or a key that did not sign', async () => {
      const s = saved.get(key(target()))!;
      const noKeys = await both(['--certificate', s.cert, '--bundle', s.bundle]);
      expect(noKeys.node.code).toBe(1);
      expect(noKeys.node.failed).toEqual(['certificate signature', 'payload signature']);
      expect(noKeys.node.checks.get('hmac')).toBe('skip');
      const cert = JSON.parse(fs.readFileSync(s.cert, 'utf8'));
      const wrong = path.join(dir, 'wrong-keys.json');
      // another Ed25519 key under the key id the certificate names
      const other = crypto.generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
      fs.writeFileSync(wrong, JSON.stringify({ keys: [{ key_id: cert.audit.ed25519_key_id, algorithm: 'Ed25519', public_key_pem: other }] }));
      const run = await both(['--certificate', s.cert, '--bundle', s.bundle, '--keys', wrong]);
      expect(run.node.failed).toEqual(['certificate signature', 'payload signature']);
    });

    it('usage errors exit 2', async () => {
      for (const args of [[], ['--certificate', 'x.json'], ['--url', 'http://x', '--key', 'k'], ['--bogus', '1'], ['--certificate', path.join(dir, 'missing.json'), '--bundle', path.join(dir, 'missing.json')]]) {
        const run = await both(args);
        expect(run.node.code, args.join(' ')).toBe(2);
        expect(run.python.code, args.join(' ')).toBe(2);
      }
    });
  });

  it('fetches, verifies and reports from the API itself (--url), the bundle sent gzip-encoded', async () => {
    const e = target();
    const run = await both(['--url', api.api.url, '--key', api.keys.enterprise, '--pair', e.pair, '--time', stamp(e.bucket)]);
    expect(run.node.code, run.node.stdout).toBe(0);
    expect(run.python.code, run.python.stdout).toBe(0);
    expect(run.node.rate).toBe(vwapText(e.trades.filter((t) => e.used.includes(t.venue))));
    expect(run.node.checks.get('hmac')).toBe('skip');
    // and its place in the transparency log, under the newest signed head
    expect(run.node.checks.get('log head')).toBe('ok');
    expect(run.node.checks.get('log inclusion')).toBe('ok');
    expect(run.node.stdout).toMatch(/^ok log inclusion: CERT-BTCZAR-20261120T100500Z is leaf \d+ of the tree of \d+ entries/m);
    // a bucket without a certificate: the API's 404, said plainly
    const missing = await both(['--url', api.api.url, '--key', api.keys.enterprise, '--pair', 'BTCZAR', '--time', stamp(T0 - BUCKET)]);
    expect(missing.node.code).toBe(1);
    expect(missing.node.stdout).toMatch(/^FAIL input: GET .* HTTP 404: No certificate for BTCZAR/m);
  });

  it('serves the Node verifier at /verify/afrates-verify.mjs without a key; the downloaded copy verifies', async () => {
    const res = await fetch(`${api.api.url}/verify/afrates-verify.mjs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    const text = await res.text();
    expect(text).toBe(fs.readFileSync(path.resolve('verify/afrates-verify.mjs'), 'utf8'));
    const copy = path.join(dir, 'afrates-verify.mjs');
    fs.writeFileSync(copy, text);
    const s = saved.get(key(target()))!;
    const run = spawnSync(process.execPath, [copy, ...fileArgs(s)], { encoding: 'utf8' });
    expect(run.status, run.stdout).toBe(0);
    const gz = await fetch(`${api.api.url}/verify/afrates-verify.mjs`, { headers: { 'Accept-Encoding': 'gzip' } });
    expect(await gz.text()).toBe(text);
    expect((await fetch(`${api.api.url}/verify/other.mjs`)).status).toBe(404);
  });

  it('keeps a certificate and its bundle byte for byte through compression, retention and late trades; both still verify', async () => {
    const e = target();
    const first = saved.get(key(e))!;
    const rawTrades = async () =>
      (await w.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM trades WHERE pair = ${e.pair} AND time >= ${new Date(e.bucket)} AND time < ${new Date(e.bucket + BUCKET)}`)[0]!.n;
    expect(await rawTrades()).toBe(e.trades.length);

    // the storage jobs as the pipeline runs them on the embedded database: compression first
    await configureRetention(w.db.sql, null);
    await runStorageJobs(w.db.sql);
    const [chunk] = await w.db.sql<{ is_compressed: boolean }[]>`
      SELECT is_compressed FROM timescaledb_information.chunks
      WHERE hypertable_name = 'trades' AND range_start <= ${new Date(e.bucket)} AND range_end > ${new Date(e.bucket)}`;
    expect(chunk!.is_compressed).toBe(true);
    const compressed = await save(e.pair, e.bucket, '-compressed');
    expect(compressed.certBytes.equals(first.certBytes)).toBe(true);
    expect(compressed.bundleBytes.equals(first.bundleBytes)).toBe(true);

    // then retention (TRADES_RETENTION_DAYS=1) drops the day's raw trades
    await configureRetention(w.db.sql, 1);
    await runStorageJobs(w.db.sql);
    expect(await rawTrades()).toBe(0);
    // the policy removed again: a server's job scheduler would drop the late trades below as well
    await configureRetention(w.db.sql, null);

    // and a venue's late trades land in that bucket, and the aggregates are refreshed over it
    await insertTrades(w.db.sql, [
      { time: new Date(e.bucket + 1_234), exchange: 'luno', pair: e.pair, tradeId: 'late-1', price: '1700000.5', amount: '0.25', side: 'buy' },
      { time: new Date(e.bucket + 2_345), exchange: 'valr', pair: e.pair, tradeId: 'late-2', price: '1500000', amount: '3', side: 'sell' },
    ]);
    await refreshAggregates(w.db.sql);
    expect(await rawTrades()).toBe(2);

    const after = await save(e.pair, e.bucket, '-after');
    expect(after.certBytes.equals(first.certBytes), 'certificate bytes').toBe(true);
    expect(after.bundleBytes.equals(first.bundleBytes), 'bundle bytes').toBe(true);
    const run = await both(fileArgs(after, ['--hmac-secret', hmacSecret]));
    expect(run.node.code, run.node.stdout).toBe(0);
    expect(run.python.code, run.python.stdout).toBe(0);
  });
});
