// make run: migrate, then run the pipeline and the API (ROLE picks one or both).
import { ConfigError, loadConfig } from '../lib/config.js';
import { createLogger } from '../lib/log.js';
import { startService, stopOnSignals } from './service.js';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`configuration error: ${err.message}\n`);
    process.exit(2);
  }
  throw err;
}
const log = createLogger(config.logLevel, { market: config.market });
const service = await startService(config, log);
log.info({ role: config.role, market: config.market, database: service.db.kind }, 'afrates running');
stopOnSignals(() => service.stop(), log);
