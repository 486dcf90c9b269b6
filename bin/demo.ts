// make demo: the embedded database, the simulated market, the pipeline and the API in one process.
// Everything it serves is labelled simulated (health mode/version, X-Afrates-Data header, logs, and
// inside every signed payload), and it keeps its own state under var/demo/ (database, signing keys,
// admin endpoint file), apart from `make run`'s real data and keys.
// REPLAY=file.jsonl plays a file of trades and FX rates instead of generating them.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/log.js';
import { backfill, backfillFx } from '../pipeline/backfill.js';
import { startSimMarket } from '../sim/index.js';
import { startService, stopOnSignals } from './service.js';

const HOUR_MS = 3_600_000;

const { values } = parseArgs({ options: { replay: { type: 'string' }, 'history-hours': { type: 'string', default: '24' } } });
const hours = Number(values['history-hours']);
const replay = values.replay ? path.resolve(values.replay) : undefined;
const historyStart = Date.now() - hours * HOUR_MS;
const env = { ...process.env, MARKET: 'simulated', AFRATES_VAR_DIR: process.env.AFRATES_VAR_DIR || 'var/demo' };
const { simVolume } = loadConfig(env);
// the generated tapes keep what collection still needs (the history's length plus two hours), so a
// demo left running does not grow with its market (docs/operations.md, "Memory and the allocator")
const sim = await startSimMarket({ seed: 1, replay, historyStart, volume: simVolume, retainMs: (hours + 2) * HOUR_MS });
const config = loadConfig({ ...env, SIM_URL: sim.url });
const log = createLogger(config.logLevel, { market: 'simulated' });
log.warn({ sim: sim.url, replay: replay ?? null, varDir: config.varDir }, 'DEMO: serving a SIMULATED market, not real prices');

// signals are heard from the start: one during start-up stops the demo once it is up
let fail: (reason: Error) => void = () => process.exit(1);
// health says `starting` (503) until the history is published: what it answers is then what stays
const starting = startService(config, log, { collect: false, starting: true, onFatal: (reason) => fail(reason) }).catch(async (err: Error) => {
  log.fatal({ reason: err.message }, `the demo could not start: ${err.message}`);
  await sim.stop();
  process.exit(1);
});
let stopping = false;
// a fatal failure (lib/process.ts onFatal) before the service is up ends the start (exit 1); afterwards, a clean stop
const stopFailed = stopOnSignals(async () => {
  stopping = true;
  await (await starting).stop(); // also ends a backfill under way
  await sim.stop();
}, log);
const service = await starting;
fail = stopFailed;
const { db, pipeline } = service;
if (pipeline) {
  // history for the candles, premium, indices and certificates before the live cycles begin: first
  // the FX sources' hourly reports over it, after the newest an earlier run stored only. Reports
  // are timed from this run's start: at other minutes of hours already recorded they would change
  // those hours' rate in force, and with it their synthetic prices and statuses (candles would
  // disagree with their certificates).
  if (!replay) await backfillFx(db.sql, (newest) => sim.fxHistory(Math.max(historyStart - 2 * HOUR_MS, newest ? newest.getTime() + HOUR_MS : -Infinity), Date.now(), HOUR_MS));
  log.info({ hours }, 'demo: backfilling simulated history');
  await backfill(pipeline, db.sql, log, { from: new Date(historyStart), to: new Date() }).catch((err) =>
    log.warn({ err: (err as Error).message }, 'demo backfill stopped'),
  );
  // Ready means published: one collection by every venue (the ones that keep no history deliver
  // their recent trades; each says where it stands) and one publish after it settle the history,
  // certify it, publish its fixings and sign the transparency log's head, and build the live rates.
  // Served before that, its candles changed, its log was empty and its venues read as failing for
  // the first minutes.
  if (!stopping) {
    log.info('demo: publishing the history (settle, certify, fixings, transparency log)');
    await pipeline.runTradeCycle().catch((err) => log.warn({ err: (err as Error).message }, 'demo: the first cycle failed; the live cycles retry it'));
  }
  if (!stopping) await service.api?.deps.snapshot.refresh();
  if (!stopping) pipeline.start();
}
if (!stopping) service.ready();
if (!stopping) log.info({ api: service.api?.url }, 'demo ready: try GET /v1/health, then make key TIER=builder NAME=demo EMAIL=demo@example.test DEMO=1');
