// sql/migrations/20261122120001000_customers.sql on a database that already has keys: every key
// gets a customer, free keys of one email become one customer with their usage merged, and the
// rest keep their own (a customer's id is its first key's, so their usage stays theirs).
import fs from 'node:fs';
import path from 'node:path';
import { runner } from 'node-pg-migrate';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { SQL_DIR } from '../../lib/db/migrate.js';
import { freshDatabaseUrl } from '../support/db.js';

const MIGRATION = '20261122120001000_customers';
let fresh: Awaited<ReturnType<typeof freshDatabaseUrl>>;
let sql: postgres.Sql;

const migrate = (count: number) =>
  runner({ databaseUrl: fresh.url, dir: path.join(SQL_DIR, 'migrations'), migrationsTable: 'pgmigrations', direction: 'up', count, singleTransaction: true, log: () => {} });

beforeAll(async () => {
  fresh = await freshDatabaseUrl();
  const before = fs.readdirSync(path.join(SQL_DIR, 'migrations')).filter((f) => f.endsWith('.sql')).sort().indexOf(`${MIGRATION}.sql`);
  expect(before).toBeGreaterThan(0);
  await migrate(before);
  sql = postgres(fresh.url, { max: 1, onnotice: () => {} });
}, 120_000);
afterAll(async () => {
  await sql?.end();
  await fresh?.drop();
});

it('gives every existing key a customer, one per email for free keys, and moves merged usage', async () => {
  const hash = (n: number) => n.toString(16).padStart(64, '0');
  await sql`
    INSERT INTO api_keys (key_hash, key_prefix, tier, customer_name, email, revoked_at) VALUES
      (${hash(1)}, 'afr_live_aaaa', 'free', 'Ann', 'ann@example.test', now()),
      (${hash(2)}, 'afr_live_bbbb', 'free', 'Ann', 'ANN@example.test', NULL),
      (${hash(3)}, 'afr_live_cccc', 'builder', 'Bob', 'bob@example.test', NULL),
      (${hash(4)}, 'afr_live_dddd', 'builder', 'Bob', 'bob@example.test', NULL),
      (${hash(5)}, 'afr_live_eeee', 'free', NULL, NULL, NULL)`;
  const ids = (await sql<{ id: string }[]>`SELECT id::text FROM api_keys ORDER BY id`).map((r) => Number(r.id));
  await sql`
    INSERT INTO api_usage (customer, month, requests) VALUES
      (${`key:${ids[0]}`}, '2026-11-01', 10), (${`key:${ids[1]}`}, '2026-11-01', 5), (${`key:${ids[2]}`}, '2026-11-01', 7)`;

  await sql.end(); // the embedded database admits one connection: the migration's
  await migrate(Infinity);
  sql = postgres(fresh.url, { max: 1, onnotice: () => {} });

  const keys = await sql<{ id: string; customer_id: string }[]>`SELECT id::text, customer_id::text FROM api_keys ORDER BY id`;
  expect(keys.map((k) => Number(k.customer_id))).toEqual([ids[0], ids[0], ids[2], ids[3], ids[4]]);
  const customers = await sql<{ id: string; tier: string; email: string | null }[]>`SELECT id::text, tier, email FROM customers ORDER BY id`;
  expect(customers.map((c) => [Number(c.id), c.tier])).toEqual([
    [ids[0], 'free'],
    [ids[2], 'builder'],
    [ids[3], 'builder'],
    [ids[4], 'free'],
  ]);
  const usage = await sql<{ customer: string; requests: string }[]>`SELECT customer, requests::text FROM api_usage ORDER BY customer`;
  expect(Object.fromEntries(usage.map((u) => [u.customer, Number(u.requests)]))).toEqual({ [`key:${ids[0]}`]: 15, [`key:${ids[2]}`]: 7 });
  // one free customer per email from now on
  await expect(sql`INSERT INTO customers (id, tier, email) VALUES (999, 'free', 'Ann@Example.test')`).rejects.toMatchObject({ code: '23505' });
});
