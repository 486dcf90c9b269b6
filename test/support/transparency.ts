// The transparency log as tests meet it: proving an entry is in the log over the API, and forging
// one behind the service's back.
import crypto from 'node:crypto';
import { expect } from 'vitest';
import type { Sql } from '../../lib/db/connect.js';
import type { TestApi } from './api.js';
import { H, rfcLeafHash, rfcVerifyInclusion } from './rfc9162.js';

/** Whether the log holds `id` under its newest signed head: the head verifies with the published key, the entry's audit path leads to the head's root. */
export async function inLog(api: TestApi, id: string): Promise<{ entry: Record<string, unknown> }> {
  const head = (await api.get('/v1/transparency/head')).body;
  const keys = (await api.get('/v1/certificates/keys')).body.keys as { key_id: string; public_key_pem: string }[];
  const key = keys.find((k) => k.key_id === head.key_id)!;
  expect(crypto.verify(null, Buffer.from(head.signed_payload), key.public_key_pem, Buffer.from(head.signature, 'base64')), 'head signature').toBe(true);
  const res = await api.get(`/v1/transparency/proof/inclusion?id=${id}&tree_size=${head.tree_size}`);
  expect(res.status, `${id} in the log`).toBe(200);
  const path = (res.body.audit_path as string[]).map((h) => Buffer.from(h, 'hex'));
  expect(rfcVerifyInclusion(res.body.leaf_index, head.tree_size, rfcLeafHash(res.body.entry), path, Buffer.from(head.root_hash, 'hex')), `${id} inclusion proof`).toBe(true);
  return { entry: JSON.parse(res.body.entry) };
}

/**
 * As the tables' owner, behind the service's back: rewrites entry `leafIndex` to `text` and
 * recomputes its leaf hash and every stored subtree above it within a tree of `treeSize` leaves,
 * as a forger covering their tracks would.
 */
export async function forgeEntry(sql: Sql, leafIndex: number, text: string, treeSize: number): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`ALTER TABLE transparency_entries DISABLE TRIGGER USER`;
    await tx`ALTER TABLE transparency_nodes DISABLE TRIGGER USER`;
    await tx`UPDATE transparency_entries SET entry = ${text}, leaf_hash = ${rfcLeafHash(text)} WHERE leaf_index = ${leafIndex}`;
    const child = async (level: number, i: number) =>
      level === 0
        ? (await tx<{ h: Buffer }[]>`SELECT leaf_hash AS h FROM transparency_entries WHERE leaf_index = ${i}`)[0]!.h
        : (await tx<{ h: Buffer }[]>`SELECT hash AS h FROM transparency_nodes WHERE level = ${level} AND idx = ${i}`)[0]!.h;
    for (let level = 1; (Math.floor(leafIndex / 2 ** level) + 1) * 2 ** level <= treeSize; level++) {
      const i = Math.floor(leafIndex / 2 ** level);
      const updated = await tx`UPDATE transparency_nodes SET hash = ${H(Buffer.of(1), await child(level - 1, 2 * i), await child(level - 1, 2 * i + 1))} WHERE level = ${level} AND idx = ${i}`;
      expect(updated.count).toBe(1);
    }
    await tx`ALTER TABLE transparency_entries ENABLE TRIGGER USER`;
    await tx`ALTER TABLE transparency_nodes ENABLE TRIGGER USER`;
  });
}
