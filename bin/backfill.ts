// make backfill [PAIR=BTCNGN] FROM=2026-01-01 TO=2026-01-31: fetch history where venues offer it,
// with a progress bar per venue and pair, then refresh the aggregates for the range.
// Idempotent: a second run stores nothing new. Needs the database to itself (stop `make run`
// first when on the embedded database).
import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { loadConfig } from '../lib/config.js';
import { openDatabase } from '../lib/db/connect.js';
import { createLogger } from '../lib/log.js';
import { backfill } from '../pipeline/backfill.js';
import { Pipeline } from '../pipeline/runner.js';
import { venues } from '../pipeline/venues/index.js';

const { values } = parseArgs({ options: { pair: { type: 'string' }, from: { type: 'string' }, to: { type: 'string' } } });
const day = (name: string, v: string | undefined, endOfDay: boolean): Date => {
  if (!v || !/^\d{4}-\d{2}-\d{2}$/.test(v) || Number.isNaN(Date.parse(v))) {
    process.stderr.write(`${name} must be a date, YYYY-MM-DD (got ${v ?? 'nothing'})\n`);
    process.exit(2);
  }
  return new Date(Date.parse(`${v}T00:00:00Z`) + (endOfDay ? 86_400_000 - 1 : 0));
};
const from = day('FROM', values.from, false);
const to = day('TO', values.to, true);
if (to < from) {
  process.stderr.write('TO must not be before FROM\n');
  process.exit(2);
}
const config = loadConfig();
const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel); // the bars are the progress report
const db = await openDatabase(config, log);
const pairs = values.pair ? values.pair.toUpperCase().split(',') : undefined;
if (pairs) {
  const known = new Set((await db.sql<{ pair: string }[]>`SELECT pair FROM pairs`).map((r) => r.pair));
  const unknown = pairs.filter((p) => !known.has(p));
  if (unknown.length) {
    process.stderr.write(`unknown PAIR: ${unknown.join(', ')}\n`);
    await db.close();
    process.exit(2);
  }
}

const bars = new cliProgress.MultiBar(
  { format: '{task} |{bar}| {percentage}% {inserted}', hideCursor: true, clearOnComplete: false, noTTYOutput: true, notTTYSchedule: 5000 },
  cliProgress.Presets.shades_classic,
);
const byTask = new Map<string, cliProgress.SingleBar>();
const pipeline = new Pipeline({ config, log, sql: db.sql, venues });
try {
  const report = await backfill(pipeline, db.sql, log, { pairs, from, to }, {
    start: (task, total) => byTask.set(task, bars.create(Math.max(1, total), 0, { task: task.padEnd(16), inserted: '' })),
    update: (task, done) => byTask.get(task)?.update(done),
    finish: (task, inserted) => {
      const bar = byTask.get(task);
      bar?.update(bar.getTotal(), { inserted: `+${inserted} trades` });
      bar?.stop();
    },
  });
  bars.stop();
  process.stdout.write(`stored ${Object.values(report.rowsBySource).reduce((a, b) => a + b, 0)} new trades\n`);
  for (const e of report.errors) process.stderr.write(`failed: ${e.source}${e.pair ? ` ${e.pair}` : ''}: ${e.error}\n`);
  if (report.errors.length) process.exitCode = 1;
} finally {
  bars.stop();
  await pipeline.stop();
  await db.close();
}
