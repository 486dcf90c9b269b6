// Two publishers signing heads at the same moments while the log grows, each on its own
// connections (as two processes would): the stored heads still only go forward, one per tree, and
// neither publisher fails for it. Before heads were signed in one transaction under the appenders'
// lock, both signed the tree they had read, so a day's heads held the same tree twice and a later
// head over a smaller tree. Needs two connections at once, so a server (TEST_DATABASE_URL).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Database } from '../../../lib/db/connect.js';
import type { CertificateSigner } from '../../../lib/signer.js';
import { append, headsOfDay } from '../../../lib/transparency/log.js';
import { signHead } from '../../../pipeline/transparency.js';
import { openTestDatabase } from '../../support/db.js';

const onServer = Boolean(process.env.TEST_DATABASE_URL);
const NO_SERVER = 'needs TEST_DATABASE_URL (a TimescaleDB server): two publishers need two connections at once, and the embedded database admits one';
let db: Database;
beforeAll(async () => {
  if (onServer) db = await openTestDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('signed heads from two publishers at once', () => {
  it('go forward, one per tree', async (ctx) => {
    if (!onServer) ctx.skip(NO_SERVER);
    const keys = crypto.generateKeyPairSync('ed25519');
    const signer = { ed25519: (p: string) => crypto.sign(null, Buffer.from(p), keys.privateKey).toString('base64'), keyId: 'k1' } as unknown as CertificateSigner;
    const first = createPool(db.url, 4);
    const second = createPool(db.url, 4);
    try {
      for (let round = 0; round < 40; round++) {
        // the log grows by a few entries from either side while both sign
        await Promise.all([
          append(first, [{ id: `A-${round}`, kind: 'certificate', entry: { id: `A-${round}` } }]),
          signHead(first, signer, new Date()),
          append(second, [{ id: `B-${round}`, kind: 'certificate', entry: { id: `B-${round}` } }]),
          signHead(second, signer, new Date()),
        ]);
      }
      await signHead(first, signer, new Date());
      const day = new Date().toISOString().slice(0, 10);
      const sizes = (await headsOfDay(db.sql, day)).map((h) => h.treeSize);
      expect(sizes.at(-1)).toBe(80);
      expect(sizes, 'every head over a larger tree than the one before').toEqual([...new Set(sizes)].sort((a, b) => a - b));
    } finally {
      await first.end();
      await second.end();
    }
  }, 120_000);
});
