// The transparency log's store (tables: sql/migrations/20261124200001000_transparency_log.sql):
// entries appended as leaves of the RFC 9162 tree (lib/transparency/merkle.ts), the hash of every
// complete aligned subtree written once as it completes, and signed tree heads. Roots and proofs
// read the few stored subtrees they need in one query. Hashes leave this module as lowercase hex.
import type { TransactionSql } from 'postgres';
import { canonicalJson } from '../signer.js';
import { date, dayStart, timestamp } from '../format.js';
import { batchesUnder } from '../db/batches.js';
import type { Sql } from '../db/pool.js';
import { appendLeaves, consistencyNodes, consistencyProof, inclusionNodes, inclusionProof, leafHash, rootAt, rootNodes, type Hash, type Node, type SubtreeHash } from './merkle.js';

/** Serialises appenders (pg_advisory_xact_lock): arbitrary and fixed. */
const APPEND_LOCK = 9_162_001;

/** What an entry records (the table's CHECK holds the same list). */
export type EntryKind = 'certificate' | 'fixing' | 'restatement';

export interface NewEntry {
  /** Unique, e.g. a certificate id CERT-BTCNGN-20261120T100500Z */
  readonly id: string;
  readonly kind: EntryKind;
  /** Stored and hashed as its canonical JSON. */
  readonly entry: object;
}

interface LogEntry {
  readonly leafIndex: number;
  readonly id: string;
  readonly kind: EntryKind;
  /** The canonical JSON text that was hashed. */
  readonly entry: string;
  readonly leafHash: string;
  readonly appendedAt: Date;
}

export interface SignedHead {
  readonly treeSize: number;
  readonly rootHash: string;
  /** The signed timestamp, in the contract's format (2026-11-24T10:05:00+00:00). */
  readonly timestamp: string;
  /** The exact text signed: canonical JSON of {root_hash, timestamp, tree_size}. */
  readonly signedPayload: string;
  /** Ed25519, base64 */
  readonly signature: string;
  readonly keyId: string;
  /** Kept for good (the last head of a finished UTC day); the others of past days are pruned. */
  readonly kept: boolean;
}

/** Signs a head's payload (the certificate signer's Ed25519 key, passed in by the service). */
type HeadSigner = (payload: string) => { signature: string; keyId: string };

/** A pool or a transaction: every read works in either, so appenders read inside their transaction. */
type Db = Sql | TransactionSql;

const hex = (h: Hash) => h.toString('hex');
const key = (level: number, index: number) => `${level}:${index}`;

/**
 * The stored hashes of the given complete subtrees, in one query (level 0: leaf hashes, kept with
 * the entries). Throws a RangeError when one is missing: the log is not that large yet.
 */
async function subtrees(sql: Db, nodes: readonly Node[]): Promise<SubtreeHash> {
  const found = new Map<string, Hash>();
  if (nodes.length > 0) {
    const rows = await sql<{ level: number; idx: string; hash: Buffer }[]>`
      WITH wanted AS (SELECT * FROM jsonb_to_recordset(${sql.json(nodes.map((n) => ({ level: n.level, index: n.index })))}) AS w(level smallint, index bigint))
      SELECT n.level, n.idx::text AS idx, n.hash FROM transparency_nodes n JOIN wanted w ON n.level = w.level AND n.idx = w.index
      UNION ALL
      SELECT 0, e.leaf_index::text, e.leaf_hash FROM transparency_entries e JOIN wanted w ON w.level = 0 AND e.leaf_index = w.index`;
    for (const r of rows) found.set(key(r.level, Number(r.idx)), r.hash);
  }
  return (level, index) => {
    const hash = found.get(key(level, index));
    if (!hash) throw new RangeError(`the log has no complete subtree (${level}, ${index}): it holds fewer than ${(index + 1) * 2 ** level} leaves`);
    return hash;
  };
}

/** How many leaves the log holds. */
export async function treeSize(sql: Db): Promise<number> {
  const [row] = await sql<{ size: string }[]>`SELECT coalesce(max(leaf_index) + 1, 0)::text AS size FROM transparency_entries`;
  return Number(row!.size);
}

/** The root of the tree of the first `size` leaves (RangeError past the log's size). */
export async function rootOf(sql: Db, size: number): Promise<string> {
  return hex(rootAt(size, await subtrees(sql, rootNodes(size))));
}

/**
 * Appends entries as the next leaves, with every subtree they complete. Runs in the caller's
 * transaction (READ COMMITTED, the default), so an entry is logged exactly when what it records is
 * stored; appenders queue on an advisory lock held to the end of that transaction.
 */
export async function appendEntries(tx: TransactionSql, entries: readonly NewEntry[]): Promise<{ treeSize: number; rootHash: string; firstIndex: number }> {
  await tx`SELECT pg_advisory_xact_lock(${APPEND_LOCK})`;
  const size = await treeSize(tx);
  const texts = entries.map((e) => canonicalJson(e.entry));
  const leaves = texts.map((t) => leafHash(t));
  const { nodes, root } = appendLeaves(size, await subtrees(tx, rootNodes(size)), leaves);

  const rows = entries.map((e, i) => ({ leaf_index: size + i, entry_id: e.id, kind: e.kind, entry: texts[i]!, leaf_hash: leaves[i]! }));
  for (const batch of batchesUnder(rows, (r) => Object.values(r))) await tx`INSERT INTO transparency_entries ${tx(batch)}`;
  const nodeRows = nodes.map((n) => ({ level: n.level, idx: n.index, hash: n.hash }));
  for (const batch of batchesUnder(nodeRows, (r) => Object.values(r))) await tx`INSERT INTO transparency_nodes ${tx(batch)}`;
  return { treeSize: size + entries.length, rootHash: hex(root), firstIndex: size };
}

/** appendEntries in a transaction of its own. */
export function append(sql: Sql, entries: readonly NewEntry[]): ReturnType<typeof appendEntries> {
  return sql.begin((tx) => appendEntries(tx, entries)) as ReturnType<typeof appendEntries>;
}

interface EntryRow {
  leaf_index: string;
  entry_id: string;
  kind: EntryKind;
  entry: string;
  leaf_hash: Buffer;
  appended_at: Date;
}

const toEntry = (r: EntryRow): LogEntry => ({ leafIndex: Number(r.leaf_index), id: r.entry_id, kind: r.kind, entry: r.entry, leafHash: hex(r.leaf_hash), appendedAt: r.appended_at });

/** The entry with this id (its leaf index included), or null. */
export async function entryById(sql: Db, id: string): Promise<LogEntry | null> {
  const [row] = await sql<EntryRow[]>`
    SELECT leaf_index::text, entry_id, kind, entry, leaf_hash, appended_at FROM transparency_entries WHERE entry_id = ${id}`;
  return row ? toEntry(row) : null;
}

/** The entry at this leaf index, or null. */
export async function entryAt(sql: Db, leafIndex: number): Promise<LogEntry | null> {
  const [row] = await sql<EntryRow[]>`
    SELECT leaf_index::text, entry_id, kind, entry, leaf_hash, appended_at FROM transparency_entries WHERE leaf_index = ${leafIndex}`;
  return row ? toEntry(row) : null;
}

/** The audit path of a leaf in the tree of `size` leaves, leaf side first (RangeError when out of range). */
export async function inclusionProofOf(sql: Db, leafIndex: number, size: number): Promise<string[]> {
  return inclusionProof(leafIndex, size, await subtrees(sql, inclusionNodes(leafIndex, size))).map(hex);
}

/** The consistency proof from the tree of `first` leaves to the tree of `second` (RangeError when out of range). */
export async function consistencyProofOf(sql: Db, first: number, second: number): Promise<string[]> {
  return consistencyProof(first, second, await subtrees(sql, consistencyNodes(first, second))).map(hex);
}

/** What a head signs: canonical JSON of its root (hex), timestamp and size. */
function headPayload(treeSize: number, rootHash: string, at: string): string {
  return canonicalJson({ root_hash: rootHash, timestamp: at, tree_size: treeSize });
}

const DAY_MS = 86_400_000;

/**
 * Signs and stores a head of the log as it stands, in one transaction that holds the appenders'
 * lock: no entry lands between reading the tree and storing its head, so two heads are stored in
 * the order of their trees (the table's trigger refuses a head that would not go forward:
 * sql/migrations/20261127150001000_publisher_lease.sql). `fence` runs first in that transaction
 * (the publisher's lease: a stale process signs nothing). With `unlessSigned`, the latest head is
 * returned instead when it is of this tree and this UTC day, or timed after `now`. In the same
 * transaction, the last head of every UTC day before `now`'s is marked kept and that day's other
 * heads are pruned.
 */
export async function publishHead(
  sql: Sql,
  sign: HeadSigner,
  now: Date,
  o: { readonly fence?: (tx: TransactionSql) => Promise<void>; readonly unlessSigned?: boolean } = {},
): Promise<SignedHead> {
  const at = timestamp(now);
  const today = dayStart(date(now));
  return (await sql.begin(async (tx) => {
    await o.fence?.(tx);
    await tx`SELECT pg_advisory_xact_lock(${APPEND_LOCK})`;
    const size = await treeSize(tx);
    if (o.unlessSigned) {
      // nothing new to sign: the tree is the latest head's, on the same UTC day; or a head was
      // signed after `now` (the next publish signs what has grown since, never a head timed back)
      const latest = await latestHead(tx);
      if (latest && ((latest.treeSize === size && latest.timestamp.slice(0, 10) === at.slice(0, 10)) || new Date(latest.timestamp) > now)) return latest;
    }
    const rootHash = await rootOf(tx, size);
    const signedPayload = headPayload(size, rootHash, at);
    const { signature, keyId } = sign(signedPayload);
    await tx`
      INSERT INTO transparency_heads (tree_size, root_hash, signed_at, signed_payload, signature, key_id)
      VALUES (${size}, ${Buffer.from(rootHash, 'hex')}, ${now}, ${signedPayload}, ${signature}, ${keyId})`;
    await tx`
      UPDATE transparency_heads SET kept = true
      WHERE NOT kept AND id IN (
        SELECT DISTINCT ON ((signed_at AT TIME ZONE 'UTC')::date) id FROM transparency_heads
        WHERE signed_at < ${today}
        ORDER BY (signed_at AT TIME ZONE 'UTC')::date, signed_at DESC, id DESC)`;
    await tx`DELETE FROM transparency_heads WHERE signed_at < ${today} AND NOT kept`;
    return { treeSize: size, rootHash, timestamp: at, signedPayload, signature, keyId, kept: false };
  })) as SignedHead;
}

interface HeadRow {
  tree_size: string;
  root_hash: Buffer;
  signed_payload: string;
  signature: string;
  key_id: string;
  kept: boolean;
}

function toHead(r: HeadRow): SignedHead {
  const signed = JSON.parse(r.signed_payload) as { timestamp: string };
  return { treeSize: Number(r.tree_size), rootHash: hex(r.root_hash), timestamp: signed.timestamp, signedPayload: r.signed_payload, signature: r.signature, keyId: r.key_id, kept: r.kept };
}

/** The newest signed head, or null before the first. */
export async function latestHead(sql: Db): Promise<SignedHead | null> {
  const [row] = await sql<HeadRow[]>`
    SELECT tree_size::text, root_hash, signed_payload, signature, key_id, kept FROM transparency_heads
    ORDER BY signed_at DESC, id DESC LIMIT 1`;
  return row ? toHead(row) : null;
}

/** The stored heads of one UTC day (YYYY-MM-DD), oldest first: all of today's, the kept one of a past day. */
export async function headsOfDay(sql: Db, day: string): Promise<SignedHead[]> {
  const start = dayStart(day);
  const rows = await sql<HeadRow[]>`
    SELECT tree_size::text, root_hash, signed_payload, signature, key_id, kept FROM transparency_heads
    WHERE signed_at >= ${start} AND signed_at < ${new Date(start.getTime() + DAY_MS)}
    ORDER BY signed_at, id`;
  return rows.map(toHead);
}
