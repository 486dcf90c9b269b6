// A month's file from GET /v1/exports/candles: a month of 5-minute BTCNGN candles (~8,900 rows) as
// gzipped CSV and as Parquet, over HTTP from the real API (started as the tests start it), timed
// from the request to the last byte, its digest (a trailer, or a kept file's header) checked:
// made from the rows (no file kept for the month: a running month, or a complete one whose rows
// changed) and kept (a complete month's file, as the service makes it ahead of requests:
// api/month-files.ts). Limit: a made month within 1 s on the embedded database.
//
// Beside them, in alternating rounds, the database's own `COPY (SELECT * FROM candle_page(...)) TO
// STDOUT WITH (FORMAT csv)` of the same rows, read to the end by the same process. On a server
// (BENCH_DATABASE_URL=postgres://...: a database is created and dropped) a complete month's export
// must give at least half of COPY's rows/s; a file made on request is printed beside it, for
// reference. On the embedded database every ratio is printed for reference.
//
// Run: node_modules/.bin/tsx bench/export.bench.ts   (or `make bench`)
import crypto from 'node:crypto';
import http from 'node:http';
import { startTestApi, seedMonth, type TestApi } from '../test/support/api.js';
import { check, header, limitRow, machine, median, round, runBench, since, table } from './support.js';

const LIMITS = { monthMs: 1_000, copyRatio: 0.5 };
/** Per venue and hour: nearly every 5-minute bucket of the month holds a trade (two venues). */
const TRADES_PER_HOUR = 30;
const ROUNDS = 7;
const ON_SERVER = Boolean(process.env.BENCH_DATABASE_URL);

interface Fetched {
  readonly ms: number;
  readonly bytes: number;
  readonly digestOk: boolean;
  /** X-Export-Cache: hit (a kept file) or miss (made from the rows) */
  readonly cache: string | undefined;
}

/** One GET read to its end, with its trailer checked against the bytes. */
function fetchFile(base: string, path: string, key: string): Promise<Fetched> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    http
      .get(`${base}${path}`, { headers: { 'X-API-Key': key } }, (res) => {
        const hash = crypto.createHash('sha256');
        let bytes = 0;
        res.on('data', (c: Buffer) => {
          hash.update(c);
          bytes += c.length;
        });
        res.on('end', () => {
          const ms = since(t0);
          if (res.statusCode !== 200) return reject(new Error(`${path}: ${res.statusCode}`));
          resolve({ ms, bytes, digestOk: (res.trailers['content-digest'] ?? res.headers['content-digest']) === `sha-256=:${hash.digest('base64')}:`, cache: res.headers['x-export-cache'] as string | undefined });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** The database's own COPY of the same rows as CSV, read to the end: its time and bytes. */
async function copyRows(t: TestApi, from: Date, to: Date): Promise<{ ms: number; bytes: number }> {
  // COPY takes no bind parameters: the statement is written by the server's format() (%L quotes)
  const [{ text }] = await t.db.sql<[{ text: string }]>`
    SELECT format('COPY (SELECT * FROM candle_page(%L, %L, %L, %L, NULL)) TO STDOUT WITH (FORMAT csv)', '5m', 'BTCNGN', ${from}::timestamptz, ${to}::timestamptz) AS text`;
  const t0 = performance.now();
  const stream = await t.db.sql.unsafe(text).readable();
  // read flowing, never paused: postgres.js 3.4.9 pauses its socket when a CopyData fills the
  // stream's buffer and resumes it only when the stream is read again, which an ended stream never
  // is; when the last CopyData paused it, the connection stayed paused and its next statement hung
  let bytes = 0;
  stream.on('data', (chunk: Buffer) => (bytes += chunk.length));
  await new Promise<void>((resolve, reject) => stream.once('end', resolve).once('error', reject));
  return { ms: since(t0), bytes };
}

/** The latest month of 31 days (8,928 five-minute buckets) that ended over a month ago. */
function longMonth(): string {
  const now = new Date();
  for (let back = 2; ; back++) {
    const from = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1);
    const to = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back + 1, 1);
    if (to - from === 31 * 86_400_000) return new Date(from).toISOString().slice(0, 7);
  }
}

async function main(): Promise<void> {
  const m = machine();
  header(`export: a month of 5-minute candles as a file, on ${ON_SERVER ? 'a TimescaleDB server (BENCH_DATABASE_URL)' : 'the embedded TimescaleDB (PGlite, in memory, one connection)'}`, [
    `client and server run in ONE process and share the ${m.cpus} cores`,
    `each figure: the median of ${ROUNDS} requests, from the request to the last byte (the digest trailer checked)`,
  ]);
  const t = await startTestApi({ hours: 1 });
  try {
    const month = longMonth();
    const t0 = performance.now();
    const { from, to, trades } = await seedMonth(t.db, month, TRADES_PER_HOUR);
    console.log(`# seeded ${month}: ${trades.toLocaleString('en-US')} trades in ${(since(t0) / 1000).toFixed(1)} s`);
    const [{ n }] = await t.db.sql<[{ n: number }]>`SELECT count(*)::int AS n FROM candle_page('5m', 'BTCNGN', ${from}, ${to}, NULL)`;
    check(n >= 8_500, `the month holds ${n} 5-minute candles, expected about 8,900`);
    const key = await t.key('enterprise');
    const path = (format: string) => `/v1/exports/candles?pair=BTCNGN&month=${month}&interval=5m&format=${format}`;

    // made: the file built from the rows, no file kept for the month (every request for a running
    // month); kept: a complete month's kept file (made ahead by the service, or by a request before)
    const forgetFiles = () => t.db.sql`DELETE FROM month_files`;
    const runs = { csvMade: [] as Fetched[], csvKept: [] as Fetched[], parquetMade: [] as Fetched[], parquetKept: [] as Fetched[], copy: [] as { ms: number; bytes: number }[] };
    await fetchFile(t.api.url, path('csv'), key); // warm-up: plans, JIT of the writers
    await fetchFile(t.api.url, path('parquet'), key);
    for (let i = 0; i < ROUNDS; i++) {
      await forgetFiles();
      runs.csvMade.push(await fetchFile(t.api.url, path('csv'), key));
      runs.csvKept.push(await fetchFile(t.api.url, path('csv'), key));
      runs.parquetMade.push(await fetchFile(t.api.url, path('parquet'), key));
      runs.parquetKept.push(await fetchFile(t.api.url, path('parquet'), key));
      runs.copy.push(await copyRows(t, from, to));
    }
    for (const [name, list] of Object.entries(runs)) if (name !== 'copy') for (const r of list as Fetched[]) check(r.digestOk, 'a file whose Content-Digest trailer is not the SHA-256 of its bytes');
    for (const r of [...runs.csvMade, ...runs.parquetMade]) check(r.cache === 'miss', 'a file meant to be made was sent from the cache');
    for (const r of [...runs.csvKept, ...runs.parquetKept]) check(r.cache === 'hit', 'a complete month asked for again was made anew');

    const ms = {
      csvMade: median(runs.csvMade.map((r) => r.ms)),
      csvKept: median(runs.csvKept.map((r) => r.ms)),
      parquetMade: median(runs.parquetMade.map((r) => r.ms)),
      parquetKept: median(runs.parquetKept.map((r) => r.ms)),
    };
    const copyMs = median(runs.copy.map((r) => r.ms));
    const rowsPerSecond = (msTaken: number) => Math.round((n / msTaken) * 1000);
    console.log(
      table([
        ['file', 'rows', 'bytes', 'ms (median)', 'rows/s'],
        ['gzipped CSV, made', n, runs.csvMade[0]!.bytes, round(ms.csvMade, 1), rowsPerSecond(ms.csvMade)],
        ['gzipped CSV, kept', n, runs.csvKept[0]!.bytes, round(ms.csvKept, 1), rowsPerSecond(ms.csvKept)],
        ['Parquet, made', n, runs.parquetMade[0]!.bytes, round(ms.parquetMade, 1), rowsPerSecond(ms.parquetMade)],
        ['Parquet, kept', n, runs.parquetKept[0]!.bytes, round(ms.parquetKept, 1), rowsPerSecond(ms.parquetKept)],
        ['COPY (candle_page) TO STDOUT, csv', n, runs.copy[0]!.bytes, round(copyMs, 1), rowsPerSecond(copyMs)],
      ]),
    );
    console.log('');
    const rows = [limitRow('month as gzipped CSV, made, ms', round(ms.csvMade, 1), LIMITS.monthMs), limitRow('month as Parquet, made, ms', round(ms.parquetMade, 1), LIMITS.monthMs)];
    const kept: [string, number][] = [
      ['gzipped CSV kept', copyMs / ms.csvKept],
      ['Parquet kept', copyMs / ms.parquetKept],
    ];
    const made: [string, number][] = [
      ['gzipped CSV made', copyMs / ms.csvMade],
      ['Parquet made', copyMs / ms.parquetMade],
    ];
    if (ON_SERVER) for (const [label, ratio] of kept) rows.push(limitRow(`complete month, ${label}, rows/s / COPY's`, round(ratio, 2), LIMITS.copyRatio, true));
    console.log(table([['figure', 'value', 'limit', 'ratio'], ...rows]));
    const reference = (list: [string, number][]) => list.map(([label, ratio]) => `${label} ${ratio.toFixed(2)}x`).join('; ');
    if (ON_SERVER) {
      console.log(`\n# made on request (a running month, or a complete one whose rows changed), rows/s / COPY's, for reference: ${reference(made)}`);
    } else {
      console.log(`\n# against COPY ... TO (at least ${LIMITS.copyRatio}x its rows/s for a complete month): the limit is a server's (BENCH_DATABASE_URL=postgres://...), skipped here;`);
      console.log(`# on the embedded database, rows/s / COPY's, for reference: ${reference(kept)}; ${reference(made)}`);
    }
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'export',
        database: ON_SERVER ? 'server' : 'embedded',
        at: new Date().toISOString(),
        machine: m,
        rows: n,
        ms: Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round(v)])),
        bytes: { csv: runs.csvMade[0]!.bytes, parquet: runs.parquetMade[0]!.bytes, copy: runs.copy[0]!.bytes },
        copy: { ms: round(copyMs) },
      }),
    );
  } finally {
    await t.close();
  }
}

runBench(main);
