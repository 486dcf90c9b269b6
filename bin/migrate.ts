// make migrate: apply pending migrations and changed SQL objects; a no-op when up to date.
import { loadConfig } from '../lib/config.js';
import { openDatabase } from '../lib/db/connect.js';
import { createLogger } from '../lib/log.js';

const config = loadConfig();
const log = createLogger(config.logLevel);
try {
  const db = await openDatabase(config, log);
  await db.close();
  log.info('database is up to date');
} catch (err) {
  log.error({ err: (err as Error).message }, 'migration failed; the database is as it was');
  process.exitCode = 1;
}
