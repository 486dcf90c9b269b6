// The transparency log's store on the real embedded database, judged by RFC 9162 as written out in
// test/support/rfc9162.ts (never by the module's own verifiers).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../../lib/db/connect.js';
import {
  append,
  appendEntries,
  consistencyProofOf,
  entryAt,
  entryById,
  headsOfDay,
  inclusionProofOf,
  latestHead,
  publishHead,
  rootOf,
  treeSize,
  type NewEntry,
} from '../../../lib/transparency/log.js';
import type { CertificateSigner } from '../../../lib/signer.js';
import { signHead } from '../../../pipeline/transparency.js';
import { openTestDatabase } from '../../support/db.js';
import { forgeEntry } from '../../support/transparency.js';
import { H, rfcLeafHash, rfcVerifyConsistency, rfcVerifyInclusion, rootOfEntries } from '../../support/rfc9162.js';

let db: Database;
beforeAll(async () => {
  db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

/** An entry whose keys come unsorted, at two levels. */
const entry = (i: number): NewEntry => ({ id: `T-${i}`, kind: i % 7 === 3 ? 'fixing' : 'certificate', entry: { n: i, id: `T-${i}`, nested: { z: 1, a: [2, { y: 1, b: 2 }] } } });
/** Its canonical JSON, written by hand: keys sorted at every level, no spaces. */
const text = (i: number) => `{"id":"T-${i}","n":${i},"nested":{"a":[2,{"b":2,"y":1}],"z":1}}`;

const unhex = (h: string) => Buffer.from(h, 'hex');
const texts: string[] = []; // every entry's text, in leaf order, as the test appended it

async function appendRange(from: number, count: number) {
  const result = await append(db.sql, Array.from({ length: count }, (_, i) => entry(from + i)));
  for (let i = 0; i < count; i++) texts.push(text(from + i));
  return result;
}

describe('appending', () => {
  it('gives the RFC root after every batch and at every size, whatever the batch sizes', async () => {
    expect(await treeSize(db.sql)).toBe(0);
    expect(await rootOf(db.sql, 0)).toBe(H().toString('hex'));
    for (const count of [1, 1, 2, 5, 3, 8, 13, 1, 21, 7, 34, 4]) {
      const before = texts.length;
      const result = await appendRange(before, count);
      expect(result.firstIndex).toBe(before);
      expect(result.treeSize).toBe(texts.length);
      expect(result.rootHash).toBe(rootOfEntries(texts).toString('hex'));
      expect(await treeSize(db.sql)).toBe(texts.length);
    }
    for (let n = 0; n <= texts.length; n++) expect(await rootOf(db.sql, n), `root at ${n}`).toBe(rootOfEntries(texts.slice(0, n)).toString('hex'));
    await expect(rootOf(db.sql, texts.length + 1)).rejects.toThrow(RangeError);
  });

  it('stores each entry as its canonical JSON with its leaf hash, found by id and by index', async () => {
    const byId = await entryById(db.sql, 'T-10');
    expect(byId).toMatchObject({ leafIndex: 10, id: 'T-10', kind: 'fixing', entry: text(10), leafHash: rfcLeafHash(text(10)).toString('hex') });
    expect(await entryAt(db.sql, 10)).toEqual(byId);
    expect(await entryById(db.sql, 'T-nope')).toBeNull();
    expect(await entryAt(db.sql, texts.length)).toBeNull();
  });

  it('appends inside the caller transaction: rolled back, neither the entries nor their nodes stay', async () => {
    const size = texts.length;
    const root = await rootOf(db.sql, size);
    await expect(
      db.sql.begin(async (tx) => {
        await appendEntries(tx, [entry(1000), entry(1001)]);
        throw new Error('the certificate insert failed');
      }),
    ).rejects.toThrow('the certificate insert failed');
    expect(await treeSize(db.sql)).toBe(size);
    expect(await rootOf(db.sql, size)).toBe(root);
    // an id already logged is refused, and the log stays as it was
    await expect(append(db.sql, [entry(1002), entry(3)])).rejects.toThrow(/duplicate key/);
    expect(await treeSize(db.sql)).toBe(size);
  });

  it('keeps a batch of large entries under the statement limit (the embedded database survives)', async () => {
    const big = Array.from({ length: 60 }, (_, i): NewEntry => ({ id: `BIG-${i}`, kind: 'restatement', entry: { pad: 'x'.repeat(1500), i } }));
    const result = await append(db.sql, big);
    for (const e of big) texts.push(JSON.stringify({ i: (e.entry as { i: number }).i, pad: 'x'.repeat(1500) }));
    expect(result.rootHash).toBe(rootOfEntries(texts).toString('hex'));
  });
});

describe('proofs', () => {
  it('inclusion proofs of every leaf verify by the RFC against the root of the size asked', async () => {
    for (const n of [1, 2, 7, 16, 33, texts.length]) {
      const root = rootOfEntries(texts.slice(0, n));
      for (let m = 0; m < n; m++) {
        const p = (await inclusionProofOf(db.sql, m, n)).map(unhex);
        expect(rfcVerifyInclusion(m, n, rfcLeafHash(texts[m]!), p, root), `leaf ${m} of ${n}`).toBe(true);
      }
    }
    await expect(inclusionProofOf(db.sql, 0, texts.length + 1)).rejects.toThrow(RangeError);
    await expect(inclusionProofOf(db.sql, 5, 5)).rejects.toThrow(RangeError);
  });

  it('consistency proofs verify by the RFC between any two sizes', async () => {
    const total = texts.length;
    const sizes = [1, 2, 3, 4, 5, 8, 11, 16, 17, 31, 32, 64, 65, 99, 100, total - 1, total];
    for (const m of sizes) {
      for (const n of sizes.filter((s) => s >= m)) {
        const p = (await consistencyProofOf(db.sql, m, n)).map(unhex);
        expect(rfcVerifyConsistency(m, n, rootOfEntries(texts.slice(0, m)), rootOfEntries(texts.slice(0, n)), p), `${m} -> ${n}`).toBe(true);
      }
    }
    await expect(consistencyProofOf(db.sql, 3, total + 1)).rejects.toThrow(RangeError);
    await expect(consistencyProofOf(db.sql, 4, 3)).rejects.toThrow(RangeError);
  });
});

describe('append-only', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE of entries and nodes', async () => {
    for (const statement of [
      db.sql`UPDATE transparency_entries SET entry = '{}' WHERE leaf_index = 0`,
      db.sql`DELETE FROM transparency_entries WHERE leaf_index = 0`,
      db.sql`TRUNCATE transparency_entries CASCADE`,
      db.sql`UPDATE transparency_nodes SET hash = hash WHERE level = 1 AND idx = 0`,
      db.sql`DELETE FROM transparency_nodes WHERE level = 1`,
      db.sql`TRUNCATE transparency_nodes`,
    ]) {
      await expect(statement).rejects.toThrow(/append-only/);
    }
    expect(await rootOf(db.sql, texts.length)).toBe(rootOfEntries(texts).toString('hex'));
  });

  it('a forger who rewrites an entry and every node above it cannot prove consistency with a saved head', async () => {
    const keys = crypto.generateKeyPairSync('ed25519');
    const sign = (payload: string) => ({ signature: crypto.sign(null, Buffer.from(payload), keys.privateKey).toString('base64'), keyId: 'test' });
    const saved = await publishHead(db.sql, sign, new Date());
    expect(saved.treeSize).toBe(texts.length);
    const victim = 37;

    // behind the service's back, as the tables' owner: entry 37 rewritten, its leaf hash and every stored subtree above it recomputed
    const forgedText = JSON.stringify({ forged: true });
    await forgeEntry(db.sql, victim, forgedText, saved.treeSize);
    const forgedRoot = await rootOf(db.sql, saved.treeSize);
    expect(forgedRoot).not.toBe(saved.rootHash);

    // the log goes on, appending on top of the forged tree
    const after = await appendRange(5000, 25);
    const proof = (await consistencyProofOf(db.sql, saved.treeSize, after.treeSize)).map(unhex);
    // the proof is sound for the forged history, and so cannot fit the head a monitor kept
    expect(rfcVerifyConsistency(saved.treeSize, after.treeSize, unhex(forgedRoot), unhex(after.rootHash), proof)).toBe(true);
    expect(rfcVerifyConsistency(saved.treeSize, after.treeSize, unhex(saved.rootHash), unhex(after.rootHash), proof)).toBe(false);
    // nor does the forged entry's inclusion proof, against the saved head
    const inclusion = (await inclusionProofOf(db.sql, victim, saved.treeSize)).map(unhex);
    expect(rfcVerifyInclusion(victim, saved.treeSize, rfcLeafHash(forgedText), inclusion, unhex(saved.rootHash))).toBe(false);
    expect(rfcVerifyInclusion(victim, saved.treeSize, rfcLeafHash(forgedText), inclusion, unhex(forgedRoot))).toBe(true);
    // and the triggers are back
    await expect(db.sql`DELETE FROM transparency_entries WHERE leaf_index = ${victim}`).rejects.toThrow(/append-only/);
  });
});

describe('signed tree heads', () => {
  const keys = crypto.generateKeyPairSync('ed25519');
  const sign = (payload: string) => ({ signature: crypto.sign(null, Buffer.from(payload), keys.privateKey).toString('base64'), keyId: 'k1' });
  const at = (iso: string) => new Date(iso);

  it('sign canonical JSON of the root, the timestamp and the size', async () => {
    const head = await publishHead(db.sql, sign, at('2030-01-01T10:05:00Z'));
    const size = await treeSize(db.sql);
    expect(head.signedPayload).toBe(`{"root_hash":"${await rootOf(db.sql, size)}","timestamp":"2030-01-01T10:05:00+00:00","tree_size":${size}}`);
    expect(crypto.verify(null, Buffer.from(head.signedPayload), keys.publicKey, Buffer.from(head.signature, 'base64'))).toBe(true);
    expect(await latestHead(db.sql)).toEqual({ ...head, timestamp: '2030-01-01T10:05:00+00:00', keyId: 'k1', kept: false });
  });

  /** One more entry: a head of the same day is signed only over a larger tree. */
  let grown = 0;
  const grow = () => append(db.sql, [{ id: `DAY-${++grown}`, kind: 'certificate', entry: { id: `DAY-${grown}` } }]);

  it('keep every head of the current UTC day, then only the day’s last, for good', async () => {
    await grow();
    await publishHead(db.sql, sign, at('2030-01-01T23:59:59.500Z'));
    await publishHead(db.sql, sign, at('2030-01-02T00:00:00Z')); // the next day: 1 January is over
    const day1 = await headsOfDay(db.sql, '2030-01-01');
    expect(day1.map((h) => [h.timestamp, h.kept])).toEqual([['2030-01-01T23:59:59.500+00:00', true]]);

    await grow();
    await publishHead(db.sql, sign, at('2030-01-02T12:00:00Z'));
    await grow();
    await publishHead(db.sql, sign, at('2030-01-02T18:00:00Z'));
    expect((await headsOfDay(db.sql, '2030-01-02')).map((h) => h.kept)).toEqual([false, false, false]);

    await publishHead(db.sql, sign, at('2030-01-04T08:00:00Z')); // 3 January had none
    expect((await headsOfDay(db.sql, '2030-01-02')).map((h) => [h.timestamp, h.kept])).toEqual([['2030-01-02T18:00:00+00:00', true]]);
    expect(await headsOfDay(db.sql, '2030-01-03')).toEqual([]);
    expect((await headsOfDay(db.sql, '2030-01-01')).length).toBe(1);
    const today = await headsOfDay(db.sql, '2030-01-04');
    expect(today.map((h) => h.kept)).toEqual([false]);
    expect(await latestHead(db.sql)).toEqual(today[0]);
    for (const h of [...(await headsOfDay(db.sql, '2030-01-01')), ...today]) {
      expect(crypto.verify(null, Buffer.from(h.signedPayload), keys.publicKey, Buffer.from(h.signature, 'base64'))).toBe(true);
    }
  });

  it('are signed by the pipeline when the tree has grown or a UTC day has begun, not after every cycle', async () => {
    const signer = { ed25519: (payload: string) => sign(payload).signature, keyId: 'k1' } as unknown as CertificateSigner;
    const first = await signHead(db.sql, signer, at('2030-01-05T10:00:00Z')); // a new day
    expect(await signHead(db.sql, signer, at('2030-01-05T10:01:00Z'))).toEqual(first); // nothing logged since
    await append(db.sql, [{ id: 'HEAD-TEST-1', kind: 'certificate', entry: { id: 'HEAD-TEST-1' } }]);
    const grown = await signHead(db.sql, signer, at('2030-01-05T10:02:00Z'));
    expect(grown.treeSize).toBe(first.treeSize + 1);
    expect((await headsOfDay(db.sql, '2030-01-05')).map((h) => h.treeSize)).toEqual([first.treeSize, grown.treeSize]);
    const nextDay = await signHead(db.sql, signer, at('2030-01-06T00:00:30Z'));
    expect([nextDay.treeSize, nextDay.timestamp]).toEqual([grown.treeSize, '2030-01-06T00:00:30+00:00']);
  });

  it('only go forward: the database refuses a smaller tree, the same tree twice in a UTC day, and a time before the latest', async () => {
    const latest = (await latestHead(db.sql))!;
    const day = latest.timestamp.slice(0, 10);
    const later = new Date(new Date(latest.timestamp).getTime() + 60_000);
    const insert = (size: number, signedAt: Date) => db.sql`
      INSERT INTO transparency_heads (tree_size, root_hash, signed_at, signed_payload, signature, key_id)
      VALUES (${size}, ${Buffer.alloc(32)}, ${signedAt}, 'x', 'x', 'k1')`;
    expect(later.toISOString().slice(0, 10)).toBe(day);
    await expect(insert(latest.treeSize - 1, later)).rejects.toThrow(/a signed head goes forward/); // the log would seem to shrink
    await expect(insert(latest.treeSize, later)).rejects.toThrow(/a signed head goes forward/); // the same tree twice in a day
    await expect(insert(latest.treeSize + 1, new Date(new Date(latest.timestamp).getTime() - 1_000))).rejects.toThrow(/a signed head goes forward/); // out of order
    // so does publishHead, for a head timed before the latest
    await grow();
    await expect(publishHead(db.sql, sign, new Date(new Date(latest.timestamp).getTime() - 1_000))).rejects.toThrow(/a signed head goes forward/);
    expect(await latestHead(db.sql)).toEqual(latest);
    // a larger tree goes on; the same tree only as the first head of the next UTC day
    const next = await publishHead(db.sql, sign, later);
    expect(next.treeSize).toBe(latest.treeSize + 1);
    const tomorrow = new Date(`${day}T00:00:00Z`).getTime() + 86_400_000 + 5_000;
    expect((await publishHead(db.sql, sign, new Date(tomorrow))).treeSize).toBe(next.treeSize);
    await expect(publishHead(db.sql, sign, new Date(tomorrow + 1_000))).rejects.toThrow(/a signed head goes forward/);
  });

  it('a kept head cannot be deleted or changed', async () => {
    await expect(db.sql`DELETE FROM transparency_heads WHERE kept`).rejects.toThrow(/refused/);
    await expect(db.sql`UPDATE transparency_heads SET tree_size = tree_size + 1 WHERE kept`).rejects.toThrow(/refused/);
    await expect(db.sql`UPDATE transparency_heads SET kept = false WHERE kept`).rejects.toThrow(/refused/);
    await expect(db.sql`TRUNCATE transparency_heads`).rejects.toThrow(/refused/);
  });
});
