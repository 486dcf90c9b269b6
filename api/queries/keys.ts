// Key queries: customers and their API keys (sql/migrations/*_customers.sql), by the key's hash.
// A customer's id is its first key's id: one value from the keys' sequence.
import type postgres from 'postgres';
import type { Sql } from '../../lib/db/connect.js';
import type { Tier } from '../../lib/tiers.js';

type Tx = postgres.TransactionSql;

export interface KeyRecord {
  readonly id: number;
  readonly prefix: string;
  readonly tier: Tier;
  readonly customer_name: string | null;
  readonly email: string | null;
  readonly created_at: Date;
  readonly revoked_at: Date | null;
}

/** A customer's key as the customer sees it (never the key itself). */
export interface OwnKey {
  readonly id: number;
  readonly prefix: string;
  readonly label: string | null;
  readonly created_at: Date;
  readonly last_used_at: Date | null;
}

export interface CustomerRecord {
  readonly id: number;
  readonly tier: Tier;
  readonly name: string | null;
  readonly email: string | null;
  readonly created_at: Date;
}

/** The email's free customer, locked, with how many active keys it has. */
export async function lockFreeCustomerByEmail(tx: Tx, email: string): Promise<{ id: string; active: number } | undefined> {
  const [row] = await tx<{ id: string; active: number }[]>`
    SELECT c.id::text, (SELECT count(*)::int FROM api_keys k WHERE k.customer_id = c.id AND k.revoked_at IS NULL) AS active
    FROM customers c WHERE lower(c.email) = lower(${email}) AND c.tier = 'free' FOR UPDATE`;
  return row;
}

/** A new customer, its id taken from the keys' sequence (its first key gets the same id). */
export async function insertCustomer(tx: Tx, c: { tier: Tier; name: string | null; email: string | null }): Promise<number> {
  const [{ id } = { id: '' }] = await tx<{ id: string }[]>`SELECT nextval(pg_get_serial_sequence('api_keys', 'id'))::text AS id`;
  await tx`INSERT INTO customers (id, tier, name, email) VALUES (${id}, ${c.tier}, ${c.name}, ${c.email})`;
  return Number(id);
}

/** A new key of `customerId` with its tier, name and email; `id` forces the key's id. */
export async function insertKey(tx: Tx, k: { customerId: number; keyHash: string; prefix: string; label: string | null; id?: number }): Promise<KeyRecord> {
  const [record] = await tx<KeyRecord[]>`
    INSERT INTO api_keys (id, key_hash, key_prefix, tier, customer_name, email, customer_id, label)
    OVERRIDING SYSTEM VALUE
    SELECT coalesce(${k.id ?? null}::bigint, nextval(pg_get_serial_sequence('api_keys', 'id'))), ${k.keyHash}, ${k.prefix},
           c.tier, c.name, c.email, c.id, ${k.label}
    FROM customers c WHERE c.id = ${k.customerId}
    RETURNING id::int, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at`;
  return record!;
}

/** An active key of the email's free customer, if any (one free customer per email). */
export async function activeFreeKey(sql: Sql, email: string): Promise<KeyRecord | null> {
  const [row] = await sql<KeyRecord[]>`
    SELECT k.id::int, k.key_prefix AS prefix, k.tier, k.customer_name, k.email, k.created_at, k.revoked_at
    FROM customers c JOIN api_keys k ON k.customer_id = c.id
    WHERE lower(c.email) = lower(${email}) AND c.tier = 'free' AND k.revoked_at IS NULL
    ORDER BY k.id LIMIT 1`;
  return row ?? null;
}

/** Every key, oldest first. */
export function allKeys(sql: Sql) {
  return sql<KeyRecord[]>`
    SELECT id::int, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at
    FROM api_keys ORDER BY id`;
}

/** Revokes a key still active (of `customerId` when given), with its hash, customer and label; undefined when there is none. */
export async function revokeKey(sql: Sql | Tx, id: number, customerId: number | null = null) {
  const [row] = await sql<(KeyRecord & { key_hash: string; customer_id: string; label: string | null })[]>`
    UPDATE api_keys SET revoked_at = now()
    WHERE id = ${id} AND revoked_at IS NULL AND (${customerId}::bigint IS NULL OR customer_id = ${customerId})
    RETURNING id::int, key_hash, key_prefix AS prefix, tier, customer_name, email, created_at, revoked_at, customer_id::text, label`;
  return row;
}

export async function customer(sql: Sql, customerId: number): Promise<CustomerRecord | null> {
  const [row] = await sql<CustomerRecord[]>`SELECT id::int, tier, name, email, created_at FROM customers WHERE id = ${customerId}`;
  return row ?? null;
}

/** A customer's active keys, oldest first. */
export function keysOf(sql: Sql | Tx, customerId: number) {
  return sql<OwnKey[]>`
    SELECT id::int, key_prefix AS prefix, label, created_at, last_used_at FROM api_keys
    WHERE customer_id = ${customerId} AND revoked_at IS NULL ORDER BY id`;
}

/** Locks a customer's row (account operations queue on it); false when there is no such customer. */
export async function lockCustomer(tx: Tx, customerId: number): Promise<boolean> {
  const [row] = await tx`SELECT id FROM customers WHERE id = ${customerId} FOR UPDATE`;
  return row !== undefined;
}

/** Moves each key's last_used_at on to the time given, never back. */
export async function noteLastUsed(sql: Sql, uses: readonly { id: number; t: string }[]): Promise<void> {
  // as JSON, not arrays: see lib/db/pool.ts (a connection that could not read the array types)
  await sql`
    UPDATE api_keys k SET last_used_at = greatest(k.last_used_at, u.t)
    FROM jsonb_to_recordset(${sql.json(uses as never)}) AS u(id bigint, t timestamptz) WHERE k.id = u.id`;
}

/** The customer an active key (by its hash) belongs to. */
export async function customerOfKey(sql: Sql, keyHash: string) {
  const [row] = await sql<{ key_id: string; customer_id: string; tier: Tier; name: string | null }[]>`
    SELECT k.id::text AS key_id, c.id::text AS customer_id, c.tier, c.name
    FROM api_keys k JOIN customers c ON c.id = k.customer_id
    WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`;
  return row;
}
