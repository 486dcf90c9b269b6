// A deployment is its database (sql/migrations/*_deployment.sql): the secret that names its part of
// Redis (api/redis.ts RedisScope) is made at its first migration and read by every process on it.
// A copy of the database restored from a dump, or copied into another database or onto another
// server, is another deployment: where a database is, is the server's system identifier (kept by
// streaming replicas and a promoted standby, new on every initdb) and the database's oid. Each
// start compares it with where the secret was made, and a copy makes its own. A copy of the data
// directory itself (a cloned volume, a base backup started as a server of its own, make run's var/
// copied) is still where it was: docs/operations.md gives the command for it. An API process
// running when its database's secret changes stops (heedSecretChange), so that none keeps the old
// part of Redis beside the new.
import type { Logger } from '../log.js';
import type { Sql } from './pool.js';

/** The deployment's secret; undefined when the database was not migrated by this version. */
export async function deploymentSecret(sql: Sql): Promise<string | undefined> {
  const [row] = await sql<{ secret: string }[]>`SELECT secret FROM deployment`;
  return row?.secret;
}

/** Where the database is, as a CTE `here(place)` for the statements below. */
const HERE = `WITH here AS (SELECT (SELECT system_identifier::text FROM pg_control_system()) || '/' || (SELECT oid::text FROM pg_database WHERE datname = current_database()) AS place)`;

/** The deployment's secret made anew here (docs/operations.md: a copy of the data directory given its own). */
export async function renewDeployment(sql: Sql): Promise<void> {
  await sql.unsafe(`${HERE} UPDATE deployment SET secret = DEFAULT, created_at = now(), made_in = here.place FROM here`);
}

/** SQLSTATEs of a server that will not say where it is (pg_control_system revoked or missing: a managed service). */
const PLACE_UNKNOWN = new Set(['42501', '42883', '0A000']);

/**
 * A new secret when the database is no longer where its secret was made (a copy), recorded where
 * it is on a first start. One statement each: processes starting together renew it once. A server
 * that will not say where it is is left as it is, with a warning. Returns whether it was renewed.
 */
export async function renewDeploymentIfCopied(sql: Sql, log: Logger): Promise<boolean> {
  try {
    await sql.unsafe(`${HERE} UPDATE deployment SET made_in = here.place FROM here WHERE made_in IS NULL`);
    const renewed = await sql.unsafe<{ was: string }[]>(
      `${HERE}, old AS (SELECT made_in AS was FROM deployment)
       UPDATE deployment d SET secret = DEFAULT, created_at = now(), made_in = here.place
       FROM here, old WHERE d.made_in <> here.place RETURNING old.was`,
    );
    if (renewed.length === 0) return false;
    log.warn({ made_in: renewed[0]!.was }, "this database is a copy of another deployment's (restored or moved): it is a deployment of its own, with its own part of Redis");
    return true;
  } catch (err) {
    if (!PLACE_UNKNOWN.has(String((err as { code?: unknown }).code))) throw err;
    log.warn({ err: (err as Error).message }, 'the server does not say where it is (pg_control_system): a copy of this database is not told from it; give a copy its own secret by hand (docs/operations.md, "Redis")');
    return false;
  }
}

/** How often a running process reads the deployment's secret again (heedSecretChange). */
export const SECRET_CHECK_MS = 5_000;

/**
 * Reads the deployment's secret now, and again every `everyMs`; calls `onChanged` once when it is
 * no longer the one first read: the database became a deployment of its own under this process
 * (a process started on it after a restore in place or a pg_upgrade renewed it, a restore replaced
 * the row, an operator renewed it by hand), and a process holding the old secret would keep the
 * old part of Redis beside the new. A read, not a notification: a restore writes the row without
 * an UPDATE. A round that fails (the database away) is tried again at the next. Returns the
 * secret first read (undefined: no row), which the caller scopes Redis with, and the stop of the
 * rounds. `onChanged` must not throw.
 */
export async function heedSecretChange(sql: Sql, onChanged: () => void, everyMs = SECRET_CHECK_MS): Promise<{ secret: string | undefined; stop(): void }> {
  const first = await deploymentSecret(sql);
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const round = async () => {
    const now = await deploymentSecret(sql).catch(() => undefined);
    if (stopped) return;
    if (now !== undefined && now !== first) {
      stopped = true;
      onChanged();
      return;
    }
    timer = setTimeout(() => void round(), everyMs).unref();
  };
  timer = setTimeout(() => void round(), everyMs).unref();
  return {
    secret: first,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
