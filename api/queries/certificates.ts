// Certificate queries: certificates are issued once per settled bucket (api/certificates/issue.ts)
// and only read back here, never recomputed.
import type { Sql } from '../../lib/db/connect.js';

/** Every key that has signed, the newest first. */
export function signingKeys(sql: Sql) {
  return sql<{ key_id: string; public_key_pem: string }[]>`
    SELECT key_id, public_key_pem FROM certificate_keys ORDER BY first_used_at DESC, key_id`;
}

/** The newest `limit` certificates of a pair with bucket in [from, to), newest first, each with when its candle was first restated. */
export function certificateList(sql: Sql, pair: string, from: Date, to: Date, limit: number) {
  return sql<{ bucket: Date; rate: string; restated_at: Date | null }[]>`
    SELECT c.bucket, c.rate,
           (SELECT min(r.restated_at) FROM restatements r WHERE r.pair = c.pair AND r.subject = 'candle_5m' AND r.time = c.bucket) AS restated_at
    FROM certificates c
    WHERE c.pair = ${pair} AND c.bucket >= ${from} AND c.bucket < ${to}
    ORDER BY c.bucket DESC
    LIMIT ${limit}`;
}

/** One certificate as issued (JSON text without the customer section), or undefined. */
export async function certificateAt(sql: Sql, pair: string, bucket: Date): Promise<string | undefined> {
  const [row] = await sql<{ body: string }[]>`SELECT body FROM certificates WHERE pair = ${pair} AND bucket = ${bucket}`;
  return row?.body;
}

/** A replication bundle as stored: its hash, size and the gzip stream of its parts in order; undefined when none. */
export async function bundleOf(sql: Sql, id: string): Promise<{ sha256: string; bytes: number; gzip: Buffer } | undefined> {
  const [row] = await sql<{ sha256: string; bytes: number }[]>`SELECT sha256, bytes FROM bundles WHERE id = ${id}`;
  if (!row) return undefined;
  const parts = await sql<{ gzip: Buffer }[]>`SELECT gzip FROM bundle_parts WHERE id = ${id} ORDER BY part`;
  return { ...row, gzip: Buffer.concat(parts.map((p) => p.gzip)) };
}
