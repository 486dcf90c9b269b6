// make backfill [PAIR=BTCNGN] FROM=2026-01-01 TO=2026-01-31: fetch history where venues offer it,
// then refresh the aggregates for that range. On a terminal: a progress bar per venue and pair;
// otherwise (CI, logs): one line per venue and pair every few seconds while it moves.
// Idempotent: a second run stores nothing new. On the embedded database it needs the database to
// itself (stop `make run` first); on a server it runs beside the service.
// MARKET=simulated (make backfill DEMO=1) fetches from make demo's market, the simulated one, never
// from the real venues: SIM_URL's, or one started here with the demo's seed (same seed and clock,
// same trades: the history the demo itself would have fetched).
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { openDatabase } from '../lib/db/connect.js';
import { createLogger, printLine } from '../lib/log.js';
import { backfill, type BackfillProgress } from '../pipeline/backfill.js';
import { backfillPipeline } from '../pipeline/process.js';
import { startSimMarket, type SimMarket } from '../sim/index.js';
import { configOrExit, fail, openOrExplain } from './fail.js';

const LINE_EVERY_MS = 5_000;

const { values } = parseArgs({ options: { pair: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } });
const day = (name: string, v: string | undefined, endOfDay: boolean): Date => {
  if (!v || !/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v))) fail(`${name} must be a date, YYYY-MM-DD (got ${v || 'nothing'})`);
  return new Date(Date.parse(`${v}T00:00:00Z`) + (endOfDay ? 86_400_000 - 1 : 0));
};
const from = day('FROM', values.from, false);
const to = day('TO', values.to, true);
if (to < from) fail('TO must not be before FROM');
let config = configOrExit();
/** The seed bin/demo.ts gives its market. */
const DEMO_SEED = 1;
let sim: SimMarket | undefined;
if (config.market === 'simulated' && !config.simUrl) {
  sim = await startSimMarket({ seed: DEMO_SEED, historyStart: from.getTime(), volume: config.simVolume });
  config = configOrExit({ SIM_URL: sim.url });
}
if (config.tradesRetentionDays !== null && from.getTime() < Date.now() - config.tradesRetentionDays * 86_400_000) {
  // trades that old are dropped by retention, and re-materialising their buckets from what is left would lose candles
  fail(`FROM is older than TRADES_RETENTION_DAYS (${config.tradesRetentionDays}): raw trades that old are not kept`);
}
const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel); // the progress is the report
const db = await openOrExplain(() => openDatabase(config, log), 'backfill');
const pairs = values.pair ? values.pair.toUpperCase().split(',') : undefined;
if (pairs) {
  const known = new Set((await db.sql<{ pair: string }[]>`SELECT pair FROM pairs`).map((r) => r.pair));
  const unknown = pairs.filter((p) => !known.has(p));
  if (unknown.length) {
    await db.close();
    fail(`unknown PAIR: ${unknown.join(', ')}`);
  }
}

/** Bars on a terminal. */
function bars(): BackfillProgress & { stop(): void } {
  const multi = new cliProgress.MultiBar({ format: '{task} |{bar}| {percentage}% {inserted}', hideCursor: true, clearOnComplete: false }, cliProgress.Presets.shades_classic);
  const byTask = new Map<string, cliProgress.SingleBar>();
  return {
    start: (task, total) => byTask.set(task, multi.create(Math.max(1, total), 0, { task: task.padEnd(16), inserted: '' })),
    update: (task, done, inserted) => byTask.get(task)?.update(done, { inserted: `+${inserted} trades` }),
    finish: (task, inserted) => {
      const bar = byTask.get(task);
      bar?.update(bar.getTotal(), { inserted: `+${inserted} trades` });
      bar?.stop();
    },
    note: (text) => multi.log(`note: ${text}\n`),
    stop: () => multi.stop(),
  };
}

/** Plain lines elsewhere: one per task when it started, every LINE_EVERY_MS while it moves, and when it ends. */
function lines(): BackfillProgress & { stop(): void } {
  const tasks = new Map<string, { total: number; printedAt: number }>();
  const print = (task: string, pct: number, inserted: number, note = '') =>
    printLine(`backfill ${task}: ${pct.toFixed(0)}% +${inserted} trades${note}`); // in order with the log's warnings
  return {
    start: (task, total) => {
      tasks.set(task, { total, printedAt: Date.now() });
      print(task, 0, 0, ' (started)');
    },
    update: (task, done, inserted) => {
      const t = tasks.get(task);
      if (!t || Date.now() - t.printedAt < LINE_EVERY_MS) return;
      t.printedAt = Date.now();
      print(task, (100 * done) / Math.max(1, t.total), inserted);
    },
    finish: (task, inserted) => print(task, 100, inserted, ' (done)'),
    note: (text) => printLine(`note: ${text}`),
    stop: () => {},
  };
}

const progress = process.stdout.isTTY ? bars() : lines();
const pipeline = backfillPipeline(config, log, db);
try {
  const report = await backfill(pipeline, db.sql, log, { pairs, from, to }, progress);
  progress.stop();
  printLine(`stored ${Object.values(report.rowsBySource).reduce((a, b) => a + b, 0)} new trades`);
  for (const e of report.errors) process.stderr.write(`failed: ${e.source}${e.pair ? ` ${e.pair}` : ''}: ${e.error}\n`);
  if (report.errors.length) process.exitCode = 1;
} finally {
  progress.stop();
  await pipeline.stop();
  await db.close();
  await sim?.stop();
}
