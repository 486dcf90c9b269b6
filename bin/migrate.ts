// make migrate: apply pending migrations and changed SQL objects; a no-op when up to date.
import { openDatabase } from '../lib/db/connect.js';
import { createLogger } from '../lib/log.js';
import { configOrExit } from './fail.js';

const config = configOrExit();
const log = createLogger(config.logLevel);
try {
  const db = await openDatabase(config, log);
  await db.close();
  log.info('database is up to date');
} catch (err) {
  // pending migrations roll back together; SQL object files already applied stay applied
  log.error({ err: (err as Error).message }, 'migration failed');
  process.exitCode = 1;
}
