// make demo: the embedded database, the simulated market, the pipeline and the API in one process.
// Everything it serves is labelled simulated (health mode/version, X-Afrates-Data header, logs).
// REPLAY=file.jsonl plays a file of trades and FX rates instead of generating them.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/log.js';
import { startService, stopOnSignals } from '../lib/service.js';
import { backfill } from '../pipeline/backfill.js';
import { startSimMarket } from '../pipeline/sim/index.js';

const { values } = parseArgs({ options: { replay: { type: 'string' }, 'history-hours': { type: 'string', default: '24' } } });
const hours = Number(values['history-hours']);
const replay = values.replay ? path.resolve(values.replay) : undefined;
const sim = await startSimMarket({ seed: 1, replay, historyStart: Date.now() - hours * 3_600_000 });
// the demo keeps its own database, apart from `make run`'s real data
const config = loadConfig({ ...process.env, MARKET: 'simulated', SIM_URL: sim.url, AFRATES_DATA_DIR: process.env.AFRATES_DATA_DIR || 'var/demo-db' });
const log = createLogger(config.logLevel, { market: 'simulated' });
log.warn({ sim: sim.url, replay: replay ?? null }, 'DEMO: serving a SIMULATED market, not real prices');

const service = await startService(config, log);
let backfilling: Promise<unknown> = Promise.resolve();
stopOnSignals(async () => {
  await service.pipeline?.stop(); // ends the backfill too
  await backfilling.catch(() => {});
  await service.stop();
  await sim.stop();
}, log);
if (service.pipeline) {
  // history for the candles, premium and indices, beside the live cycles
  log.info({ hours }, 'demo: backfilling simulated history');
  backfilling = backfill(service.pipeline, service.db.sql, log, { from: new Date(Date.now() - hours * 3_600_000), to: new Date() });
  await backfilling.then(() => service.api?.deps.snapshot.refresh()).catch((err) => log.warn({ err: (err as Error).message }, 'demo backfill stopped'));
}
log.info({ api: service.api?.url }, 'demo ready: try GET /v1/health, then make key TIER=builder NAME=demo EMAIL=demo@example.test');
