// A deployment is its database (lib/db/deployment.ts): the secret naming its part of Redis stays
// across restarts, and a copy of the database restored or made somewhere else makes its own at its
// first start, so a staging service restored from production's dump never shares production's keys,
// revocations and counters on one Redis. On a server, a real copy (CREATE DATABASE ... TEMPLATE);
// everywhere, a database whose row says it was made elsewhere, as a restored dump's row does.
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '../../../lib/db/connect.js';
import { migrate } from '../../../lib/db/migrate.js';
import type { Logger } from '../../../lib/log.js';
import { freshDatabaseUrl, testLog } from '../../support/db.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await freshDatabaseUrl();
});
afterAll(async () => {
  await database?.drop();
});

async function deployment(url: string): Promise<{ secret: string; made_in: string | null }> {
  const sql = createPool(url, 1);
  try {
    const [row] = await sql<{ secret: string; made_in: string | null }[]>`SELECT secret, made_in FROM deployment`;
    return row!;
  } finally {
    await sql.end();
  }
}

/** A logger that keeps the warnings' messages, and the place each names. */
function listening(): { log: Logger; warned: string[]; places: unknown[] } {
  const warned: string[] = [];
  const places: unknown[] = [];
  const warn = (fields: { made_in?: unknown }, msg?: string) => {
    warned.push(String(msg));
    places.push(fields?.made_in);
  };
  return { warned, places, log: { ...testLog, warn } as unknown as Logger };
}

describe('the deployment a database is', () => {
  it('keeps its secret across starts, and makes its own when its row says it was made elsewhere (a restored copy)', async () => {
    await migrate(database.url, testLog);
    const first = await deployment(database.url);
    expect(first.made_in).toMatch(/^\d+\/\d+$/); // the server's system identifier and the database's oid
    const quiet = listening();
    await migrate(database.url, quiet.log);
    expect(await deployment(database.url)).toEqual(first);
    expect(quiet.warned.filter((m) => m.includes('copy'))).toEqual([]);

    // a dump of another server's database restored here brings that server's place with its row
    const sql = createPool(database.url, 1);
    await sql`UPDATE deployment SET made_in = '1234567890123456789/16384'`;
    await sql.end();
    const told = listening();
    await migrate(database.url, told.log);
    const copy = await deployment(database.url);
    expect(copy.secret).not.toBe(first.secret);
    expect(copy.made_in).toBe(first.made_in);
    expect(told.warned.some((m) => m.includes('a copy of another deployment'))).toBe(true);
    expect(told.places).toContain('1234567890123456789/16384'); // where it was copied from
    await migrate(database.url, testLog); // and keeps the new one from then on
    expect((await deployment(database.url)).secret).toBe(copy.secret);
  });

  it.runIf(onServer)('on a server, a database copied from another (CREATE DATABASE ... TEMPLATE) is a deployment of its own; the original keeps its secret', async () => {
    const original = await freshDatabaseUrl();
    const name = new URL(original.url).pathname.slice(1);
    const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
    const copyName = `${name}_copy`;
    const copyUrl = new URL(original.url);
    copyUrl.pathname = `/${copyName}`;
    try {
      await migrate(original.url, testLog);
      const before = await deployment(original.url);
      await admin.unsafe(`CREATE DATABASE ${copyName} TEMPLATE ${name}`);
      expect((await deployment(copyUrl.toString())).secret).toBe(before.secret); // the copy, as made

      // two processes starting on the copy together: it is renewed once
      const [a, b] = [listening(), listening()];
      await Promise.all([migrate(copyUrl.toString(), a.log), migrate(copyUrl.toString(), b.log)]);
      expect([...a.warned, ...b.warned].filter((m) => m.includes('a copy of another deployment'))).toHaveLength(1);
      const copy = await deployment(copyUrl.toString());
      expect(copy.secret).not.toBe(before.secret);
      expect(copy.made_in).not.toBe(before.made_in);
      await migrate(original.url, testLog);
      expect(await deployment(original.url)).toEqual(before);
    } finally {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${copyName} WITH (FORCE)`);
      await admin.end();
      await original.drop();
    }
  });
});
