// make migrate: apply pending migrations and changed SQL objects; a no-op when up to date.
// --restate="<reason>" consents to a rebuild that changes settled, published candles (each change
// recorded as a restatement with that reason); --rollback applies SQL objects older than the
// database's (going back to an earlier release on purpose). docs/aggregates.md says when to use them.
import { parseArgs } from 'node:util';
import { openDatabase } from '../lib/db/connect.js';
import { createLogger } from '../lib/log.js';
import { configOrExit } from './fail.js';

const config = configOrExit();
const log = createLogger(config.logLevel);
const { values } = parseArgs({ options: { restate: { type: 'string', default: '' }, rollback: { type: 'string', default: '' } } });
try {
  const db = await openDatabase(config, log, { migrate: { restate: values.restate.trim() || undefined, older: ['1', 'true', 'yes'].includes(values.rollback.trim().toLowerCase()) ? 'apply' : 'refuse' } });
  await db.close();
  log.info('database is up to date');
} catch (err) {
  // nothing of a refused or failed step is applied: pending migrations roll back together, and the
  // SQL objects are swapped in by one transaction
  log.error({ err: (err as Error).message }, 'migration failed');
  process.exitCode = 1;
}
