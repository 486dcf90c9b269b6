// How the operator commands end on a problem they can name: one line on stderr, exit 2, never a
// stack trace.
import { ConfigError, loadConfig, type Config } from '../lib/config.js';
import { EmbeddedDatabaseBusy } from '../lib/db/embedded/index.js';

export function fail(message: string): never {
  process.stderr.write(`error: ${message}\n`);
  process.exit(2);
}

/** Opens the database, turning "the embedded database is in use" into one line naming the way out. */
export async function openOrExplain<T>(open: () => Promise<T>, command: string): Promise<T> {
  try {
    return await open();
  } catch (err) {
    if (err instanceof EmbeddedDatabaseBusy) {
      fail(`${command}: the embedded database ${err.dataDir} is in use by process ${err.pid} (make run or make demo); stop it first, or set DATABASE_URL to a server`);
    }
    fail(`${command}: ${(err as Error).message}`);
  }
}

/** The configuration, or one line naming the bad variable. */
export function configOrExit(overrides: Record<string, string | undefined> = {}): Config {
  try {
    return loadConfig({ ...process.env, ...overrides });
  } catch (err) {
    if (err instanceof ConfigError) fail(`configuration: ${err.message}`);
    throw err;
  }
}
