// A backlog is certified a batch of buckets at a time (pipeline/certify/issue.ts). What is published
// must be what each bucket gets when certified alone: the same certificates, bundles and
// transparency log, byte for byte. And a stop between batches leaves whole batches stored, the
// rest certified once by the next run.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../lib/db/connect.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { parametersInForce } from '../../lib/methodology/parameters.js';
import { createSigner, type CertificateSigner } from '../../lib/signer.js';
import { softwareIdentity } from '../../lib/software.js';
import { bundleOf } from '../../api/queries/certificates.js';
import { storeBundles } from '../../pipeline/certify/bundle.js';
import { Certifier, CERTIFY_BATCH_TRADES, type OnIssued } from '../../pipeline/certify/issue.js';
import { StoppedPartWay } from '../../pipeline/settle.js';
import { insertFxRates, insertTrades } from '../../pipeline/store.js';
import { logIssued } from '../../pipeline/transparency.js';
import { openTestDatabase } from '../support/db.js';
import { generateFx, generateTrades } from '../support/market.js';

const START = new Date('2026-10-01T00:00:00Z');
const HOURS = 8;
const END = new Date(START.getTime() + HOURS * 3_600_000);
const BUCKET_MS = 300_000;
const ISSUED_AT = new Date('2026-10-02T00:00:00Z');

const dbs: Database[] = [];
let keyDir: string;
let signer: CertificateSigner;

/** A database holding the same eight hours of BTCNGN (two venues, untraded buckets among them) and its USDT leg. */
async function market(): Promise<Database> {
  const db = await openTestDatabase();
  dbs.push(db);
  const trades = [
    ...generateTrades({ seed: 41, start: START, hours: HOURS, listings: { BTCNGN: ['luno', 'quidax'] }, tradesPerHour: 10 }),
    ...generateTrades({ seed: 42, start: START, hours: HOURS, listings: { BTCUSDT: ['binance'] }, tradesPerHour: 120 }),
  ];
  await insertTrades(db.sql, trades);
  await insertFxRates(db.sql, generateFx(START, HOURS + 1));
  for (const venue of ['luno', 'quidax']) await db.sql`INSERT INTO venue_markets (exchange, pair, symbol) VALUES (${venue}, 'BTCNGN', 'BTCNGN') ON CONFLICT DO NOTHING`;
  await refreshAggregates(db.sql);
  return db;
}

const certifier = (db: Database, onIssued: OnIssued = logIssued) =>
  new Certifier(db.sql, { signer, issuerUrl: 'https://afrates.test', market: 'real', software: softwareIdentity(), parameters: parametersInForce(900), now: () => ISSUED_AT }, onIssued);

/** Everything published: certificates, bundles (their compressed parts too) and the transparency log. */
async function published(db: Database) {
  const [certificates, bundles, parts, entries, nodes] = await Promise.all([
    db.sql`SELECT pair, bucket, rate::text, body FROM certificates ORDER BY pair, bucket`,
    db.sql`SELECT id, sha256, bytes, parts FROM bundles ORDER BY id`,
    db.sql`SELECT id, part, encode(gzip, 'hex') AS gzip FROM bundle_parts ORDER BY id, part`,
    db.sql`SELECT leaf_index::text, entry_id, kind, entry, encode(leaf_hash, 'hex') AS leaf_hash FROM transparency_entries ORDER BY leaf_index`,
    db.sql`SELECT level, idx, encode(hash, 'hex') AS hash FROM transparency_nodes ORDER BY level, idx`,
  ]);
  return { certificates: [...certificates], bundles: [...bundles], parts: [...parts], entries: [...entries], nodes: [...nodes] };
}

beforeAll(async () => {
  keyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-batches-'));
  signer = createSigner({ hmacSecret: 'batches-secret', keyDir });
}, 60_000);

afterAll(async () => {
  for (const db of dbs) await db.close().catch(() => {});
  fs.rmSync(keyDir, { recursive: true, force: true });
});

describe('a backlog certified in batches', () => {
  it('publishes, byte for byte, what certifying each bucket alone publishes', async () => {
    const [batched, alone] = [await market(), await market()];
    const issued = await certifier(batched).issue([{ pair: 'BTCNGN', from: START, to: END }]);
    let one = 0;
    for (let at = START.getTime(); at < END.getTime(); at += BUCKET_MS) {
      one += await certifier(alone).issue([{ pair: 'BTCNGN', from: new Date(at), to: new Date(at + BUCKET_MS) }]);
    }
    // more than one batch's worth, with untraded buckets among them (no certificate for those)
    expect(issued).toBeGreaterThan(48);
    expect(issued).toBeLessThan(HOURS * 12);
    expect(issued).toBe(one);
    const [a, b] = [await published(batched), await published(alone)];
    expect(a.certificates).toHaveLength(issued);
    expect(a.entries).toHaveLength(issued);
    expect(a).toEqual(b);
  }, 240_000);

  it('stops between batches: whole batches stay stored, and the next run certifies the rest, each bucket once', async () => {
    const db = await market();
    const range = { pair: 'BTCNGN', from: START, to: END };
    const batches: number[] = [];
    const counting: OnIssued = async (tx, issued) => {
      batches.push(issued.length);
      await logIssued(tx, issued);
    };
    // told to stop once the first batch is stored
    await expect(certifier(db, counting).issue([range], () => batches.length > 0)).rejects.toBeInstanceOf(StoppedPartWay);
    expect(batches).toHaveLength(1);
    const [first] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM certificates`;
    expect(first!.n).toBe(batches[0]);
    const rest = await certifier(db, counting).issue([range]);
    expect(rest).toBeGreaterThan(0);
    const [all] = await db.sql<{ n: number; buckets: number; logged: number }[]>`
      SELECT count(*)::int AS n, count(DISTINCT bucket)::int AS buckets, (SELECT count(*)::int FROM transparency_entries) AS logged FROM certificates`;
    expect(all).toEqual({ n: batches[0]! + rest, buckets: batches[0]! + rest, logged: batches[0]! + rest });
    expect(await certifier(db, counting).issue([range])).toBe(0);
  }, 240_000);

  it('stores each bucket once when two pipelines certify overlapping ranges at once, with its bundle and log entry', async () => {
    const db = await market();
    // the second starts 7 buckets later: its batches overlap the first's part-way
    const later = new Date(START.getTime() + 7 * BUCKET_MS);
    const [a, b] = await Promise.all([certifier(db).issue([{ pair: 'BTCNGN', from: START, to: END }]), certifier(db).issue([{ pair: 'BTCNGN', from: later, to: END }])]);
    const [row] = await db.sql<{ certificates: number; buckets: number; bundles: number; logged: number; distinct_logged: number }[]>`
      SELECT (SELECT count(*)::int FROM certificates) AS certificates, (SELECT count(DISTINCT bucket)::int FROM certificates) AS buckets,
             (SELECT count(*)::int FROM bundles) AS bundles,
             (SELECT count(*)::int FROM transparency_entries) AS logged, (SELECT count(DISTINCT entry_id)::int FROM transparency_entries) AS distinct_logged`;
    expect(row!.certificates).toBeGreaterThan(48);
    expect(row).toEqual({ certificates: a + b, buckets: a + b, bundles: a + b, logged: a + b, distinct_logged: a + b });
    // and each bundle and log entry is its own certificate's
    const [mismatched] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM certificates c
      LEFT JOIN bundles b ON b.id = c.body::jsonb ->> 'certificate_id' AND b.sha256 = c.body::jsonb -> 'bundle' ->> 'sha256'
      LEFT JOIN transparency_entries e ON e.entry_id = c.body::jsonb ->> 'certificate_id'
      WHERE b.id IS NULL OR e.entry_id IS NULL`;
    expect(mismatched!.n).toBe(0);
  }, 240_000);

  it('keeps a batch of busy buckets under its trade bound, every bucket certified once', async () => {
    const db = await openTestDatabase();
    dbs.push(db);
    // two hours of a busy book: ~500 trades a bucket over both venues
    await insertTrades(db.sql, generateTrades({ seed: 43, start: START, hours: 2, listings: { BTCNGN: ['luno', 'quidax'] }, tradesPerHour: 3_000 }));
    await insertFxRates(db.sql, generateFx(START, 3));
    await refreshAggregates(db.sql);
    const batches: string[][] = [];
    const counting: OnIssued = async (tx, issued) => {
      batches.push(issued.map((i) => i.time));
      await logIssued(tx, issued);
    };
    const issued = await certifier(db, counting).issue([{ pair: 'BTCNGN', from: START, to: new Date(START.getTime() + 2 * 3_600_000) }]);
    expect(issued).toBe(24);
    const rows = await db.sql<{ bucket: Date; trades: number }[]>`SELECT bucket, trades::int AS trades FROM candles WHERE pair = 'BTCNGN' AND interval = '5m'`;
    const tradesAt = new Map(rows.map((r) => [r.bucket.getTime(), r.trades]));
    const sizes = batches.map((b) => b.reduce((sum, time) => sum + tradesAt.get(Date.parse(time))!, 0));
    expect(batches.length).toBeGreaterThan(4);
    for (const [i, size] of sizes.entries()) if (batches[i]!.length > 1) expect(size).toBeLessThanOrEqual(CERTIFY_BATCH_TRADES);
    expect(batches.flat()).toHaveLength(24);
  }, 120_000);

  it('stores bundles larger than a statement may carry in parts, each row under the limit, served whole', async () => {
    const db = dbs[0] ?? (await market());
    // incompressible text: its gzip is as long, several statements' worth, beside a small one
    const texts = { 'CERT-LARGE-1': crypto.randomBytes(40_000).toString('base64'), 'CERT-SMALL-1': '{"small":true}' };
    const bundles = Object.entries(texts).map(([id, text]) => ({ id, bundle: { text, sha256: crypto.createHash('sha256').update(text).digest('hex'), bytes: Buffer.byteLength(text) } }));
    await db.sql.begin((tx) => storeBundles(tx, bundles));
    for (const [id, text] of Object.entries(texts)) {
      const stored = await bundleOf(db.sql, id);
      expect(zlib.gunzipSync(stored!.gzip).toString()).toBe(text);
    }
    const [parts] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM bundle_parts WHERE id = 'CERT-LARGE-1'`;
    expect(parts!.n).toBeGreaterThan(2);
  }, 60_000);
});
