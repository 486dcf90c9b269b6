// Deployment queries: the secret this deployment's database was made with (its part of Redis).
import type { Sql } from '../../lib/db/connect.js';

/** The deployment's secret; undefined when the database was not migrated by this version. */
export async function deploymentSecret(sql: Sql): Promise<string | undefined> {
  const [row] = await sql<{ secret: string }[]>`SELECT secret FROM deployment`;
  return row?.secret;
}
