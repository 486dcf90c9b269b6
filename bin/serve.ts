// make run: migrate, then run the pipeline and the API (ROLE picks one or both).
import { createLogger } from '../lib/log.js';
import { configOrExit } from './fail.js';
import { startService, stopOnSignals } from './service.js';

const config = configOrExit();
const log = createLogger(config.logLevel, { market: config.market });
// signals are heard from the start: one during start-up stops the service once it is up
let fail: (reason: Error) => void = () => process.exit(1);
const starting = startService(config, log, { onFatal: (reason) => fail(reason) }).catch((err: Error) => {
  // one line saying why (a busy database, a taken port), not a stack trace
  log.fatal({ reason: err.message }, `afrates could not start: ${err.message}`);
  process.exit(1);
});
// a fatal failure (lib/process.ts onFatal) before the service is up ends the start (exit 1); afterwards, a clean stop
const stopFailed = stopOnSignals(async () => (await starting).stop(), log);
const service = await starting;
fail = stopFailed;
// with the venues it collects: several pipeline processes may share the work (VENUES); which one
// publishes, the lease's log lines say (pipeline/lease.ts)
log.info({ role: config.role, market: config.market, database: service.db.kind, ...(config.role !== 'api' ? { venues: config.venues ?? 'all' } : {}) }, 'afrates running');
