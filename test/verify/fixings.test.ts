// Fixings verified by someone who trusts none of our code: a replayed market collected by the real
// pipeline over ccxt, settled, fixed (16:00 in the quote currency's zone and 00:00 UTC, each over
// the hour before), appended to the transparency log, served over HTTP; then checked by the two
// verifiers in verify/ (Node's and Debian's Python) as programs, from saved files and with --url:
// the fixing's rate recomputed to its signed string (the test's own exact VWAP of the trades it
// wrote), its window, zone and kind, and its place in the log under the newest signed head. A
// fixing whose hour had no trade carries no rate, and that verifies too; tampered, either fails.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { insertFxRates } from '../../pipeline/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { rng } from '../support/market.js';
import { SimWorld } from '../support/pipeline.js';
import { both, canonical, requirePythonCryptography, vwapText, VERIFIERS, type VerifierRun } from './support.js';

const MIN = 60_000;
const HOUR = 60 * MIN;
const at = (day: number, hour: number, minute = 0) => Date.UTC(2026, 10, day, hour, minute);
const T0 = at(20, 11, 40);
const END = at(21, 0, 30);

interface Trade {
  venue: string;
  pair: string;
  time: number;
  price: string;
  amount: string;
}
const trades: Trade[] = [];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-verify-fixings-'));
const replay = path.join(dir, 'market.jsonl');

/**
 * Two stretches of trading, 11:45-14:20 UTC on the 20th and 23:45-00:15 into the 21st. BTCZAR on
 * Luno and VALR throughout, and on Binance 25% dear in the hour of Johannesburg's 16:00 fixing
 * (13:00-14:00 UTC: an outlier); BTCKES on Luno only before noon, so the hour of Nairobi's 16:00
 * (12:00-13:00 UTC) and the last hour of the 20th have none; BTCUSDT on Binance (the synthetic
 * price's leg); nobody lists BTCGHS.
 */
function writeReplay(): void {
  const random = rng(1600);
  const stretches: [number, number][] = [
    [at(20, 11, 45), at(20, 14, 20)],
    [at(20, 23, 45), at(21, 0, 15)],
  ];
  const books: [string, string, number, (t: number) => boolean][] = [
    ['luno', 'BTCZAR', 1_627_000, () => true],
    ['valr', 'BTCZAR', 1_628_000, () => true],
    ['binance', 'BTCZAR', 1_627_000 * 1.25, (t) => t >= at(20, 13) && t < at(20, 14)],
    ['luno', 'BTCKES', 11_900_000, (t) => t < at(20, 12)],
    ['binance', 'BTCUSDT', 90_000, () => true],
  ];
  for (const [from, to] of stretches) {
    for (const [n, [venue, pair, level, trades_]] of books.entries()) {
      for (let t = from + n * 17; t < to; t += 40_000 + Math.floor(random() * 50_000)) {
        if (!trades_(t)) continue;
        trades.push({ venue, pair, time: t, price: (level * (1 + (random() - 0.5) * 0.004)).toFixed(2), amount: (0.0001 + random() * 0.4).toFixed(8) });
      }
    }
  }
  let id = 1;
  const lines = [...trades].sort((a, b) => a.time - b.time).map((t) => JSON.stringify({ venue: t.venue, pair: t.pair, time: new Date(t.time).toISOString(), id: String(id++), price: t.price, amount: t.amount, side: 'buy' }));
  fs.writeFileSync(replay, `${lines.join('\n')}\n`);
}
writeReplay();

const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay });
let api: TestApi;
let pipeline: Pipeline;
let hmacSecret: string;
const keysFile = path.join(dir, 'keys.json');

async function getBytes(urlPath: string, key?: string): Promise<Buffer> {
  const res = await fetch(`${api.api.url}${urlPath}`, { headers: key ? { 'X-API-Key': key } : {} });
  expect(res.status, urlPath).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}
const write = (name: string, content: string | Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
};

beforeAll(async () => {
  requirePythonCryptography();
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  // FX in force from before the first window: ZAR and KES, fresh for the whole day
  const fxAt = new Date(T0 - 30 * MIN);
  await insertFxRates(w.db.sql, [
    { time: fxAt, currency: 'ZAR', unitsPerUsd: 18.0625, source: 'coinbase', sourceUpdatedAt: fxAt },
    { time: fxAt, currency: 'KES', unitsPerUsd: 129.25, source: 'coinbase', sourceUpdatedAt: fxAt },
  ]);
  // five minutes at a time while the market trades, an hour at a time between
  const quiet = (t: number) => t >= at(20, 14, 30) && t < at(20, 23, 30);
  while (w.clock < END) {
    w.clock += quiet(w.clock) ? HOUR : 5 * MIN;
    await pipeline.runTradeCycle();
  }
  hmacSecret = fs.readFileSync(path.join(w.dir, 'keys', 'cert-hmac.secret'), 'utf8');
  fs.writeFileSync(keysFile, await getBytes('/v1/certificates/keys'));
}, 300_000);

afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

interface Case {
  readonly pair: string;
  readonly date: string;
  readonly kind: 'local' | 'utc';
  readonly id: string;
  readonly zone: string;
  readonly localTime: string;
  readonly window: readonly [number, number];
  /** the venues whose trades make the rate (none: no rate), and those left out */
  readonly used: readonly string[];
  readonly excluded: readonly string[];
}
const CASES: readonly Case[] = [
  { pair: 'BTCZAR', date: '2026-11-20', kind: 'local', id: 'FIX-BTCZAR-20261120T140000Z', zone: 'Africa/Johannesburg', localTime: '2026-11-20T16:00:00+02:00', window: [at(20, 13), at(20, 14)], used: ['luno', 'valr'], excluded: ['binance outlier'] },
  { pair: 'BTCZAR', date: '2026-11-21', kind: 'utc', id: 'FIX-BTCZAR-20261121T000000Z', zone: 'UTC', localTime: '2026-11-21T00:00:00+00:00', window: [at(20, 23), at(21, 0)], used: ['luno', 'valr'], excluded: ['binance no_trades'] },
  { pair: 'BTCKES', date: '2026-11-20', kind: 'local', id: 'FIX-BTCKES-20261120T130000Z', zone: 'Africa/Nairobi', localTime: '2026-11-20T16:00:00+03:00', window: [at(20, 12), at(20, 13)], used: [], excluded: ['luno no_trades'] },
  { pair: 'BTCGHS', date: '2026-11-21', kind: 'utc', id: 'FIX-BTCGHS-20261121T000000Z', zone: 'UTC', localTime: '2026-11-21T00:00:00+00:00', window: [at(20, 23), at(21, 0)], used: [], excluded: [] },
];
const label = (c: Case) => `${c.pair} ${c.kind} ${c.date}`;

interface Saved {
  readonly record: string;
  readonly bundle: string;
  readonly head: string;
  readonly proof: string;
}
const saved = new Map<string, Saved>();

/** A fixing's signed record and bundle as an Enterprise customer gets them, with the log's newest head and the fixing's inclusion proof under it. */
async function save(c: Case): Promise<Saved> {
  const day = JSON.parse((await getBytes(`/v1/fixings/${c.pair}/${c.date}`, api.keys.enterprise)).toString('utf8'));
  const fixing = day.fixings.find((f: { kind: string }) => f.kind === c.kind);
  expect(fixing, label(c)).toBeDefined();
  expect(fixing.bundle_url).toBe(`/v1/fixings/${c.pair}/${c.date}/${c.kind}/bundle`);
  const headBytes = await getBytes('/v1/transparency/head');
  const size = JSON.parse(headBytes.toString('utf8')).tree_size as number;
  const tag = `${c.pair}-${c.date}-${c.kind}`;
  const s = {
    record: write(`${tag}.record.json`, JSON.stringify(fixing.certificate)),
    bundle: write(`${tag}.bundle.json`, await getBytes(fixing.bundle_url, api.keys.enterprise)),
    head: write(`${tag}.head.json`, headBytes),
    proof: write(`${tag}.proof.json`, await getBytes(`/v1/transparency/proof/inclusion?id=${c.id}&tree_size=${size}`)),
  };
  saved.set(tag, s);
  return s;
}
const fileArgs = (s: Saved, extra: string[] = []) => ['--certificate', s.record, '--bundle', s.bundle, '--keys', keysFile, '--head', s.head, '--proof', s.proof, ...extra];
const urlArgs = (c: Case) => ['--url', api.api.url, '--key', api.keys.enterprise, '--pair', c.pair, '--fixing', c.kind, '--date', c.date];

function expectAllHold(run: Record<'node' | 'python', VerifierRun>, c: Case, skipped: string[]): void {
  for (const v of VERIFIERS) {
    expect(run[v].code, `${label(c)} ${v}\n${run[v].stdout}${run[v].stderr}`).toBe(0);
    for (const [name, status] of run[v].checks) expect(status, `${label(c)} ${v}: ${name}\n${run[v].stdout}`).toBe(skipped.includes(name) ? 'skip' : 'ok');
    for (const name of ['fixing', 'rate', 'exclusions', 'log head', 'log inclusion']) expect(run[v].checks.get(name), `${label(c)} ${name}`).toBe('ok');
  }
}

describe('fixings verified independently', () => {
  it('publishes each designed fixing with the window, zone, venues and exclusions the market makes', async () => {
    for (const c of CASES) {
      const day = JSON.parse((await getBytes(`/v1/fixings/${c.pair}/${c.date}`, api.keys.enterprise)).toString('utf8'));
      const f = day.fixings.find((x: { kind: string }) => x.kind === c.kind);
      expect(f, label(c)).toMatchObject({ fixing_id: c.id, zone: c.zone, local_time: c.localTime, window: { start: `${new Date(c.window[0]).toISOString().slice(0, 19)}+00:00`, end: `${new Date(c.window[1]).toISOString().slice(0, 19)}+00:00` } });
      expect(f.sources.map((s: { exchange: string }) => s.exchange), label(c)).toEqual(c.used);
      expect(f.excluded.map((e: { exchange: string; reason: string }) => `${e.exchange} ${e.reason}`), label(c)).toEqual(c.excluded);
    }
  });

  it('with trades: both verifiers recompute the rate to the signed string, the exact VWAP of the hour before, and prove the fixing in the log, from files and over --url', async () => {
    for (const c of CASES.filter((x) => x.used.length > 0)) {
      const rate = vwapText(trades.filter((t) => t.pair === c.pair && c.used.includes(t.venue) && t.time >= c.window[0] && t.time < c.window[1]));
      const s = await save(c);
      expect(JSON.parse(JSON.parse(fs.readFileSync(s.record, 'utf8')).audit.signed_payload)).toMatchObject({ rate, fixing: c.kind, time: `${new Date(c.window[1]).toISOString().slice(0, 19)}+00:00` });
      const fromFiles = await both(fileArgs(s, ['--hmac-secret', hmacSecret]));
      expectAllHold(fromFiles, c, []);
      expect(fromFiles.node.rate, label(c)).toBe(rate);
      expect(fromFiles.node.stdout).toMatch(new RegExp(`^afrates fixing ${c.id}$`, 'm'));
      expect(fromFiles.node.stdout).toContain(`ok fixing: ${c.kind} fixing of ${c.date}: ${c.kind === 'utc' ? '00:00' : '16:00'} in ${c.zone} (${c.localTime})`);
      const remote = await both(urlArgs(c));
      expectAllHold(remote, c, ['hmac']);
      expect(remote.node.rate, label(c)).toBe(rate);
    }
  });

  it('without trades: no rate, as signed, and the exclusions with their reasons; verified from files and over --url, in the log too', async () => {
    for (const c of CASES.filter((x) => x.used.length === 0)) {
      const s = await save(c);
      const record = JSON.parse(fs.readFileSync(s.record, 'utf8'));
      expect(record.data.rate, label(c)).toBeNull();
      expect(JSON.parse(record.audit.signed_payload), label(c)).toMatchObject({ rate: null, sources: [], fixing: c.kind });
      expect(record.verification, label(c)).toMatchObject({ status: 'unverified', confidence: null, data_quality: 'low' });
      const fromFiles = await both(fileArgs(s, ['--hmac-secret', hmacSecret]));
      expectAllHold(fromFiles, c, []);
      expect(fromFiles.node.rate).toBe('none');
      expect(fromFiles.node.stdout).toContain('ok rate: none: no trade in the window, so no rate (minimum-data rule), as signed');
      expect(fromFiles.node.stdout).toContain(`ok exclusions: ${c.excluded.join(', ') || 'none'}`);
      expect(fromFiles.node.stdout).toContain('ok trades: no trade in the window');
      expect(fromFiles.node.stdout).toContain('ok data quality: low');
      expectAllHold(await both(urlArgs(c)), c, ['hmac']);
    }
    // Nairobi's hour had no BTCKES trade but a BTC/USDT leg and KES FX: a synthetic price, never the rate
    const kes = JSON.parse(fs.readFileSync(saved.get('BTCKES-2026-11-20-local')!.record, 'utf8'));
    expect(kes.verification.synthetic_price).toBeGreaterThan(0);
  });

  describe('fails, naming what failed', () => {
    async function expectFailure(args: string[], named: string[]) {
      const run = await both(args);
      for (const v of VERIFIERS) {
        expect(run[v].code, `${v}\n${run[v].stdout}${run[v].stderr}`).toBe(1);
        for (const n of named) expect(run[v].failed, `${v} names ${n}\n${run[v].stdout}`).toContain(n);
      }
      return run.node.stdout;
    }

    it("a trade slipped into the bundle of a fixing without trades", async () => {
      const s = saved.get('BTCKES-2026-11-20-local')!;
      const bundle = JSON.parse(fs.readFileSync(s.bundle, 'utf8'));
      bundle.trades = [{ amount: '0.5', exchange: 'luno', price: '11900000', side: 'buy', time: '2026-11-20T12:30:00.000000+00:00', trade_id: 'slipped-in' }];
      const file = write('kes-bundle-with-trade.json', canonical(bundle));
      const out = await expectFailure(fileArgs({ ...s, bundle: file }), ['bundle hash', 'rate', 'venues', 'log inclusion']);
      expect(out).toMatch(/^FAIL rate: recomputed 11900000, signed null; recomputed 11900000, data.rate null$/m);
      expect(out).toMatch(/^FAIL log inclusion: the logged entry differs from the entry built from the fixing and its bundle in bundle_sha256$/m);
    });

    it("a fixing's local time moved to another zone's clock", async () => {
      const s = saved.get('BTCZAR-2026-11-20-local')!;
      const record = JSON.parse(fs.readFileSync(s.record, 'utf8'));
      record.fixing.local_time = '2026-11-20T17:00:00+03:00';
      const file = write('zar-record-moved.json', JSON.stringify(record));
      const out = await expectFailure(fileArgs({ ...s, record: file }), ['fixing', 'certificate signature', 'log inclusion']);
      expect(out).toMatch(/^FAIL fixing: local time "2026-11-20T17:00:00\+03:00" is not 16:00 on "2026-11-20"$/m);
      expect(out).toMatch(/^FAIL log inclusion: the logged entry differs from the entry built from the fixing and its bundle in certificate_sha256$/m);
    });

    it('the bundle of another fixing', async () => {
      const s = saved.get('BTCZAR-2026-11-20-local')!;
      const out = await expectFailure(fileArgs({ ...s, bundle: saved.get('BTCZAR-2026-11-21-utc')!.bundle }), ['bundle hash', 'bundle identity', 'log inclusion']);
      expect(out).toMatch(/^FAIL bundle identity: bundle of "FIX-BTCZAR-20261121T000000Z", not of "FIX-BTCZAR-20261120T140000Z"/m);
    });

    it('usage errors exit 2', async () => {
      const base = ['--url', api.api.url, '--key', api.keys.enterprise, '--pair', 'BTCZAR'];
      for (const args of [[...base, '--fixing', 'local'], [...base, '--date', '2026-11-20'], [...base, '--fixing', 'weekly', '--date', '2026-11-20'], [...base, '--fixing', 'local', '--date', '2026-02-30'], [...base, '--fixing', 'local', '--date', '2026-11-20', '--time', '2026-11-20T14:00:00+00:00']]) {
        const run = await both(args);
        for (const v of VERIFIERS) expect(run[v].code, `${v} ${args.join(' ')}\n${run[v].stderr}`).toBe(2);
      }
      // a day without that fixing: the API's 404, said plainly
      const missing = await both([...base, '--fixing', 'local', '--date', '2026-11-19']);
      expect(missing.node.code).toBe(1);
      expect(missing.node.stdout).toMatch(/^FAIL input: GET .* HTTP 404: No fixing of BTCZAR on 2026-11-19/m);
    });
  });
});
