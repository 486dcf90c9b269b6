// The transparency log (lib/transparency/log.ts) at scale:
//   1. a tree of TRANSPARENCY_LEAVES leaves (default 10,000,000) built in the database with
//      set-based SQL, a chunk of 2^19 leaves at a time: the entries with their leaf hashes
//      (sha256() in SQL), then each level of the chunk's complete subtrees from the one below it,
//      exactly the rows the log would have stored; then vacuumed, analysed and (embedded)
//      checkpointed, as a maintained database holds it;
//   2. inclusion and consistency proof latency through the store, p50/p99 over random proofs;
//   3. appending a cycle's certificates (20 and 60 entries) on top of that tree;
//   4. storage per million leaves: pg_total_relation_size of entries and nodes.
// Limits (issue 24): proofs p99 <= 10 ms, an append of 20 or 60 entries p99 <= 50 ms.
//
// The log's tables need nothing else, so the database gets only their migration: the embedded
// database (a data directory under the temp dir) by default, or with BENCH_DATABASE_URL a database
// of its own on that server (created and dropped; any PostgreSQL 11+, TimescaleDB or not).
//
// Run: node_modules/.bin/tsx bench/transparency.bench.ts   (or `make bench`)
//   TRANSPARENCY_LEAVES=1000000   a smaller tree
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { createPool, type Sql } from '../lib/db/connect.js';
import { startEmbedded, type EmbeddedDatabase } from '../lib/db/embedded/index.js';
import { SQL_DIR } from '../lib/db/migrate.js';
import { canonicalJson } from '../lib/signer.js';
import { append, consistencyProofOf, entryAt, inclusionProofOf, rootOf, treeSize, type NewEntry } from '../lib/transparency/log.js';
import { EMPTY_ROOT, appendLeaves, leafHash } from '../lib/transparency/merkle.js';
// the verifier customers run (verify/afrates-verify.mjs): its RFC 9162 checks
import { verifyConsistency, verifyInclusion } from '../verify/afrates-verify.mjs';
import { issuedEntry } from '../pipeline/transparency.js';
import { rng } from '../test/support/market.js';
import { check, fmt, header, limitRow, machine, percentile, round, runBench, since, table } from './support.js';

const LEAVES = Number(process.env.TRANSPARENCY_LEAVES ?? 10_000_000);
const SERVER_URL = process.env.BENCH_DATABASE_URL;
const CHUNK_LEVELS = 19;
const CHUNK = 2 ** CHUNK_LEVELS; // 524,288 leaves
const PROOFS = 1_000;
const APPENDS = 100;
const WARM_UP = 5;
const LIMITS = { proofP99Ms: 10, appendP99Ms: 50 };
const MIGRATION = fs.readdirSync(path.join(SQL_DIR, 'migrations')).find((f) => f.endsWith('_transparency_log.sql'))!;

// Entries as the pipeline logs them (pipeline/transparency.ts issuedEntry): canonical JSON of a
// certificate's id, pair, time, rate and two SHA-256s, about 290 bytes; leaf i's made in SQL and here.
const md5 = (i: number) => crypto.createHash('md5').update(String(i)).digest('hex');
const ENTRY_SQL = `'{"bundle_sha256":"' || md5(i::text) || md5((i + 1)::text) || '","certificate_sha256":"' || md5((i + 2)::text) || md5((i + 3)::text) || '","id":"CERT-BTCNGN-' || i || '","kind":"certificate","pair":"BTCNGN","rate":"150123456.7","time":"2026-11-20T10:05:00+00:00"}'`;
const certificateEntry = (i: number): NewEntry =>
  issuedEntry({ id: `CERT-BTCNGN-${i}`, kind: 'certificate', pair: 'BTCNGN', time: '2026-11-20T10:05:00+00:00', rate: '150123456.7', certificateSha256: md5(i + 2) + md5(i + 3), bundleSha256: md5(i) + md5(i + 1) });
const entryText = (i: number) => canonicalJson(certificateEntry(i).entry);

/** A fresh, empty database: its URL and how to get rid of it. */
async function freshDatabase(): Promise<{ url: string; kind: string; drop(): Promise<void> }> {
  if (!SERVER_URL) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-transparency-'));
    const embedded: EmbeddedDatabase = await startEmbedded(path.join(dir, 'db'));
    return { url: embedded.url, kind: 'the embedded database (PGlite, a data directory)', drop: async () => (await embedded.stop(), fs.rmSync(dir, { recursive: true, force: true })) };
  }
  const name = `afrates_bench_${crypto.randomBytes(6).toString('hex')}`;
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const [row] = await admin<{ version: string }[]>`SELECT split_part(version(), ' on ', 1) AS version`;
  return { url: url.toString(), kind: `a server (BENCH_DATABASE_URL, ${row!.version})`, drop: async () => (await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`), await admin.end()) };
}

/** The log's tables: the Up part of their migration. */
async function createTables(sql: Sql): Promise<void> {
  const text = fs.readFileSync(path.join(SQL_DIR, 'migrations', MIGRATION), 'utf8');
  await sql.unsafe(text.slice(0, text.indexOf('-- Down Migration')));
}

/**
 * One level of complete subtrees from the level below (level 0: the entries' leaf hashes), for the
 * nodes of that level below with index in [lo, hi): pairs of neighbours (2j, 2j + 1) -> j; a lone
 * last one waits for its sibling.
 */
async function buildLevel(sql: Sql, level: number, lo: number, hi: number): Promise<void> {
  const below =
    level === 1
      ? `SELECT leaf_index AS idx, leaf_hash AS hash FROM transparency_entries WHERE leaf_index >= ${lo} AND leaf_index < ${hi}`
      : `SELECT idx, hash FROM transparency_nodes WHERE level = ${level - 1} AND idx >= ${lo} AND idx < ${hi}`;
  await sql.unsafe(`
    INSERT INTO transparency_nodes (level, idx, hash)
    SELECT ${level}, idx / 2, sha256('\\x01'::bytea || hash || next)
    FROM (SELECT idx, hash, lead(hash) OVER (ORDER BY idx) AS next FROM (${below}) AS b) AS s
    WHERE idx % 2 = 0 AND next IS NOT NULL`);
}

/**
 * Builds the tree of n leaves, a chunk of 2^CHUNK_LEVELS leaves at a time (its entries, then its
 * subtrees up to the chunk's own), then the few levels above the chunks.
 */
async function buildTree(sql: Sql, n: number, progress: (line: string) => void): Promise<number> {
  const t0 = performance.now();
  for (let from = 0; from < n; from += CHUNK) {
    const end = Math.min(n, from + CHUNK);
    await sql.unsafe(`
      INSERT INTO transparency_entries (leaf_index, entry_id, kind, entry, leaf_hash)
      SELECT i, 'CERT-BTCNGN-' || i, 'certificate', e, sha256('\\x00'::bytea || convert_to(e, 'UTF8'))
      FROM generate_series(${from}::bigint, ${end - 1}::bigint) AS i, LATERAL (SELECT ${ENTRY_SQL} AS e) AS x`);
    for (let level = 1; level <= CHUNK_LEVELS && 2 ** level <= end - from; level++) {
      await buildLevel(sql, level, from / 2 ** (level - 1), Math.floor(end / 2 ** (level - 1)));
    }
    await sql`CHECKPOINT`; // the embedded database has no checkpointer of its own: keep its WAL bounded
    progress(`${fmt(end)} / ${fmt(n)} leaves with their subtrees (${fmt(since(t0) / 1000)} s)`);
  }
  for (let level = CHUNK_LEVELS + 1; 2 ** level <= n; level++) await buildLevel(sql, level, 0, n);
  return since(t0);
}

const stats = (ms: readonly number[]) => ({ p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) });

/** p50/p99 of `count` timed calls. */
async function timed(count: number, call: (i: number) => Promise<void>): Promise<{ p50: number; p99: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    await call(i);
    ms.push(since(t0));
  }
  return stats(ms);
}


async function main(): Promise<void> {
  const db = await freshDatabase();
  header(`transparency: the RFC 9162 log (lib/transparency/log.ts) on ${db.kind}`, [
    `tree: ${fmt(LEAVES)} leaves of entries as the pipeline logs them (about 290 bytes), built with set-based SQL (sha256() in the database): per chunk of ${fmt(CHUNK)} leaves one INSERT ... SELECT of entries, then one per level of its subtrees`,
    `proofs: ${fmt(PROOFS)} inclusion proofs of random leaves in the whole tree, ${fmt(PROOFS)} consistency proofs from a random size to the whole tree, each one store call (one query for its nodes), timed by wall clock`,
    `appends: ${WARM_UP} first appends of 20, then ${APPENDS} batches each of 20 and of 60 certificates' entries, alternating, on top of the tree, each append() its own transaction`,
    'storage: pg_total_relation_size (table, TOAST, indexes) of transparency_entries and transparency_nodes, per million leaves',
  ]);
  const sql = createPool(db.url, SERVER_URL ? 2 : 1);
  try {
    await createTables(sql);
    const buildMs = await buildTree(sql, LEAVES, (line) => process.stdout.write(`  ${line}\n`));
    // the tree as a maintained database holds it: vacuumed and analysed, and on the embedded database
    // checkpointed, as its hourly storage jobs leave it (pipeline/maintenance.ts); straight after the
    // build, the proofs' own reads would set each page's hint bits and write the pages out
    const maintained = performance.now();
    await sql`VACUUM (ANALYZE) transparency_entries, transparency_nodes`;
    if (!SERVER_URL) await sql`CHECKPOINT`;
    const maintainMs = since(maintained);
    check((await treeSize(sql)) === LEAVES, 'the tree has every leaf');

    // the set-based build is the log's own: sampled entries hash as the module hashes them, the
    // first 65,536 leaves fold to the stored root of that size, and every proof below verifies
    const root = await rootOf(sql, LEAVES);
    const random = rng(24);
    for (let k = 0; k < 20; k++) {
      const i = Math.floor(random() * LEAVES);
      const e = await entryAt(sql, i);
      check(e?.entry === entryText(i) && e.leafHash === leafHash(entryText(i)).toString('hex'), `entry ${i} is as generated, with its leaf hash`);
    }
    const prefix = Math.min(LEAVES, 65_536);
    const leaves = (await sql<{ h: Buffer }[]>`SELECT leaf_hash AS h FROM transparency_entries WHERE leaf_index < ${prefix} ORDER BY leaf_index`).map((r) => r.h);
    check(appendLeaves(0, () => EMPTY_ROOT, leaves).root.toString('hex') === (await rootOf(sql, prefix)), `the first ${prefix} leaves fold to the stored root`);

    // timed: the store call alone; one proof in ten is verified after the timing
    const toVerify: { kind: 'inclusion' | 'consistency'; at: number; proof: string[] }[] = [];
    const inclusion = await timed(PROOFS, async (k) => {
      const i = Math.floor(random() * LEAVES);
      const proof = await inclusionProofOf(sql, i, LEAVES);
      if (k % 10 === 0) toVerify.push({ kind: 'inclusion', at: i, proof });
    });
    const consistency = await timed(PROOFS, async (k) => {
      const m = 1 + Math.floor(random() * (LEAVES - 1));
      const proof = await consistencyProofOf(sql, m, LEAVES);
      if (k % 10 === 0) toVerify.push({ kind: 'consistency', at: m, proof });
    });
    const rootBytes = Buffer.from(root, 'hex');
    for (const v of toVerify) {
      const proof = v.proof.map((h) => Buffer.from(h, 'hex'));
      const ok =
        v.kind === 'inclusion'
          ? verifyInclusion(v.at, LEAVES, Buffer.from((await entryAt(sql, v.at))!.leafHash, 'hex'), proof, rootBytes)
          : verifyConsistency(v.at, LEAVES, Buffer.from(await rootOf(sql, v.at), 'hex'), rootBytes, proof);
      check(ok, `${v.kind} proof at ${v.at} verifies`);
    }

    // appends: the first few after the build read cold index pages (reported apart); then batches
    // of 20 and 60 alternate, so that both sizes meet the same conditions
    let next = LEAVES; // appended leaves continue the tree's ids
    const appendMs = async (size: number) => {
      const batch = Array.from({ length: size }, () => certificateEntry(next++));
      const t0 = performance.now();
      await append(sql, batch);
      return since(t0);
    };
    const cold: number[] = [];
    for (let k = 0; k < WARM_UP; k++) cold.push(await appendMs(20));
    const ms20: number[] = [];
    const ms60: number[] = [];
    for (let k = 0; k < APPENDS; k++) {
      ms20.push(await appendMs(20));
      ms60.push(await appendMs(60));
    }
    const append20 = stats(ms20);
    const append60 = stats(ms60);
    const finalSize = await treeSize(sql);
    check(finalSize === LEAVES + 20 * WARM_UP + 80 * APPENDS, 'every appended entry is in the log');
    check(verifyConsistency(LEAVES, finalSize, rootBytes, Buffer.from(await rootOf(sql, finalSize), 'hex'), (await consistencyProofOf(sql, LEAVES, finalSize)).map((h) => Buffer.from(h, 'hex'))), 'the appends extend the tree');

    const [bytes] = await sql<{ entries: string; nodes: string; node_rows: string }[]>`
      SELECT pg_total_relation_size('transparency_entries')::text AS entries, pg_total_relation_size('transparency_nodes')::text AS nodes,
             (SELECT count(*) FROM transparency_nodes)::text AS node_rows`;
    const perMillion = (b: string) => (Number(b) / finalSize) * 1e6;
    const entriesPerM = perMillion(bytes!.entries);
    const nodesPerM = perMillion(bytes!.nodes);

    console.log('');
    console.log(`built: ${fmt(LEAVES)} entries and ${fmt(Number(bytes!.node_rows))} nodes in ${fmt(buildMs / 1000)} s, then vacuumed and analysed${SERVER_URL ? '' : ' and checkpointed'} in ${fmt(maintainMs / 1000)} s`);
    console.log(`first ${WARM_UP} appends of 20 after the build (cold pages, not in the figures below): ${cold.map((ms) => fmt(ms)).join(', ')} ms`);
    console.log('');
    console.log(
      table([
        ['figure', 'p50 ms', 'p99 ms', 'max ms', 'limit (p99) ms', 'ratio'],
        ...[
          [`inclusion proof, ${fmt(LEAVES)} leaves`, inclusion],
          [`consistency proof, to ${fmt(LEAVES)} leaves`, consistency],
          ['append 20 entries', append20],
          ['append 60 entries', append60],
        ].map(([label, f]) => {
          const fig = f as { p50: number; p99: number; max: number };
          const [, value, limit, verdict] = limitRow(label as string, fig.p99, (label as string).startsWith('append') ? LIMITS.appendP99Ms : LIMITS.proofP99Ms);
          return [label as string, fig.p50, value, fig.max, limit, verdict];
        }),
      ]),
    );
    console.log('');
    console.log(
      table([
        ['storage per million leaves', 'bytes', 'MB'],
        ['entries (about 290-byte entries, hash, id, indexes)', Math.round(entriesPerM), entriesPerM / 2 ** 20],
        ['nodes (every complete subtree above the leaves)', Math.round(nodesPerM), nodesPerM / 2 ** 20],
        ['total', Math.round(entriesPerM + nodesPerM), (entriesPerM + nodesPerM) / 2 ** 20],
      ]),
    );
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'transparency',
        database: SERVER_URL ? 'server' : 'embedded',
        leaves: LEAVES,
        buildS: round(buildMs / 1000, 1),
        inclusionMs: { p50: round(inclusion.p50), p99: round(inclusion.p99) },
        consistencyMs: { p50: round(consistency.p50), p99: round(consistency.p99) },
        coldAppend20Ms: cold.map((ms) => round(ms)),
        append20Ms: { p50: round(append20.p50), p99: round(append20.p99) },
        append60Ms: { p50: round(append60.p50), p99: round(append60.p99) },
        bytesPerMillionLeaves: { entries: Math.round(entriesPerM), nodes: Math.round(nodesPerM) },
        machine: machine(),
      }),
    );
  } finally {
    await sql.end({ timeout: 5 });
    await db.drop();
  }
}

runBench(main);
