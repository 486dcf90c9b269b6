// The tree module against RFC 9162 itself: the recursive definitions of MTH, PATH and PROOF
// (section 2.1) and the verification algorithms (sections 2.1.3.2, 2.1.4.2) are written again in
// test/support/rfc9162.ts, from the RFC's text, and the module's answers must equal theirs.
import { describe, expect, it } from 'vitest';
import {
  EMPTY_ROOT,
  appendLeaves,
  consistencyNodes,
  consistencyProof,
  inclusionNodes,
  inclusionProof,
  leafHash,
  nodeHash,
  piecesOf,
  rootAt,
  type Hash,
  type SubtreeHash,
} from '../../../lib/transparency/merkle.js';
import { mth, path, proof, rfcVerifyConsistency, rfcVerifyInclusion } from '../../support/rfc9162.js';
// the verifier customers run (verify/afrates-verify.mjs): its RFC 9162 checks
import { verifyConsistency, verifyInclusion } from '../../../verify/afrates-verify.mjs';

// ---- data ----
const N = 64;
const entries = Array.from({ length: N }, (_, i) => Buffer.from(`{"entry":${i}}`));

/**
 * The subtree accessor a store would be, for the tree of `size` leaves, computed by the RFC's MTH:
 * it refuses any subtree that is not complete inside that tree, and counts what it is asked.
 */
function accessor(size: number): { subtree: SubtreeHash; calls: number } {
  const state = {
    calls: 0,
    subtree: (level: number, index: number): Hash => {
      state.calls++;
      const start = index * 2 ** level;
      const end = start + 2 ** level;
      if (!Number.isInteger(index) || index < 0 || end > size) throw new Error(`asked for subtree (${level}, ${index}), not complete in a tree of ${size}`);
      return mth(entries.slice(start, end));
    },
  };
  return state;
}

const hex = (hashes: readonly Buffer[]) => hashes.map((h) => h.toString('hex'));

describe('hashes and roots', () => {
  it('hashes leaves and nodes with the RFC prefixes, and the empty tree is SHA-256 of nothing', () => {
    expect(EMPTY_ROOT.toString('hex')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(EMPTY_ROOT.equals(mth([]))).toBe(true);
    expect(leafHash(entries[3]!).equals(mth([entries[3]!]))).toBe(true);
    expect(leafHash('{"entry":3}').equals(leafHash(entries[3]!))).toBe(true);
    const [a, b] = [leafHash(entries[0]!), leafHash(entries[1]!)];
    expect(nodeHash(a, b).equals(mth(entries.slice(0, 2)))).toBe(true);
    expect(nodeHash(b, a).equals(mth(entries.slice(0, 2)))).toBe(false);
  });

  it('gives the RFC root for every size from 0 to 64, reading O(log n) subtrees', () => {
    for (let n = 0; n <= N; n++) {
      const a = accessor(n);
      expect(rootAt(n, a.subtree).toString('hex'), `size ${n}`).toBe(mth(entries.slice(0, n)).toString('hex'));
      expect(a.calls).toBeLessThanOrEqual(Math.ceil(Math.log2(n + 1)));
    }
  });

  it('splits a range into its complete aligned subtrees, largest first', () => {
    expect(piecesOf(0, 13)).toEqual([
      { level: 3, index: 0 },
      { level: 2, index: 2 },
      { level: 0, index: 12 },
    ]);
    expect(piecesOf(0, 0)).toEqual([]);
    expect(piecesOf(16, 22)).toEqual([
      { level: 2, index: 4 },
      { level: 1, index: 10 },
    ]);
  });
});

describe('inclusion proofs', () => {
  it('equal PATH(m, D[n]) for every leaf of every tree up to 64 leaves, and verify by the RFC', () => {
    for (let n = 1; n <= N; n++) {
      const root = mth(entries.slice(0, n));
      for (let m = 0; m < n; m++) {
        const a = accessor(n);
        const got = inclusionProof(m, n, a.subtree);
        expect(hex(got), `leaf ${m} of ${n}`).toEqual(hex(path(m, entries.slice(0, n))));
        expect(rfcVerifyInclusion(m, n, leafHash(entries[m]!), got, root)).toBe(true);
        expect(verifyInclusion(m, n, leafHash(entries[m]!), got, root)).toBe(true);
        // each path element is folded from at most one subtree per level
        expect(a.calls).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n + 1)) + 1);
        expect(inclusionNodes(m, n).length).toBeLessThanOrEqual(a.calls);
      }
    }
  });

  it('fail when the proof, the leaf, the index, the size or the root is changed', () => {
    const n = 45;
    const root = mth(entries.slice(0, n));
    const leaf = leafHash(entries[20]!);
    const good = inclusionProof(20, n, accessor(n).subtree);
    const flipped = good.map((h, i) => (i === 2 ? Buffer.from(h.map((b, j) => (j === 0 ? b ^ 1 : b))) : h));
    const otherRoot = mth(entries.slice(0, n - 1));
    for (const verify of [rfcVerifyInclusion, verifyInclusion]) {
      expect(verify(20, n, leaf, good, root)).toBe(true);
      expect(verify(20, n, leaf, flipped, root)).toBe(false);
      expect(verify(20, n, leaf, good.slice(0, -1), root)).toBe(false);
      expect(verify(20, n, leaf, [...good, good[0]!], root)).toBe(false);
      expect(verify(20, n, leafHash(entries[21]!), good, root)).toBe(false);
      expect(verify(21, n, leaf, good, root)).toBe(false);
      // a size of the same shape (46) passes: a proof binds the size only through the signed head's root
      expect(verify(20, 2 * n, leaf, good, root)).toBe(false);
      expect(verify(20, n, leaf, good, otherRoot)).toBe(false);
      expect(verify(n, n, leaf, good, root)).toBe(false);
    }
  });

  it('refuse an index outside the tree', () => {
    expect(() => inclusionProof(5, 5, accessor(5).subtree)).toThrow(RangeError);
    expect(() => inclusionProof(-1, 5, accessor(5).subtree)).toThrow(RangeError);
    expect(() => inclusionProof(0, 0, accessor(0).subtree)).toThrow(RangeError);
  });
});

describe('consistency proofs', () => {
  it('equal PROOF(m, D[n]) for every 1 <= m <= n <= 64, and verify by the RFC', () => {
    for (let n = 1; n <= N; n++) {
      const second = mth(entries.slice(0, n));
      for (let m = 1; m <= n; m++) {
        const first = mth(entries.slice(0, m));
        const a = accessor(n);
        const got = consistencyProof(m, n, a.subtree);
        expect(hex(got), `${m} -> ${n}`).toEqual(hex(proof(m, entries.slice(0, n))));
        expect(rfcVerifyConsistency(m, n, first, second, got)).toBe(true);
        if (m < n) expect(verifyConsistency(m, n, first, second, got)).toBe(true); // the customer's verifier takes first < second
        expect(a.calls).toBeLessThanOrEqual(2 * Math.ceil(Math.log2(n + 1)) + 2);
        expect(consistencyNodes(m, n).length).toBeLessThanOrEqual(a.calls);
      }
    }
  });

  it('fail when the proof, either root or either size is changed', () => {
    const [m, n] = [13, 50];
    const first = mth(entries.slice(0, m));
    const second = mth(entries.slice(0, n));
    const good = consistencyProof(m, n, accessor(n).subtree);
    const flipped = good.map((h, i) => (i === 1 ? Buffer.from(h.map((b, j) => (j === 31 ? b ^ 0x80 : b))) : h));
    // a first tree whose leaf 5 was rewritten: its root no longer fits the second tree
    const forged = [...entries.slice(0, m)];
    forged[5] = Buffer.from('{"entry":"forged"}');
    for (const verify of [rfcVerifyConsistency, verifyConsistency]) {
      expect(verify(m, n, first, second, good)).toBe(true);
      expect(verify(m, n, first, second, flipped)).toBe(false);
      expect(verify(m, n, first, second, good.slice(1))).toBe(false);
      expect(verify(m, n, first, second, [])).toBe(false);
      expect(verify(m, n, mth(forged), second, good)).toBe(false);
      expect(verify(m, n, first, mth(entries.slice(0, n - 1)), good)).toBe(false);
      expect(verify(m + 1, n, first, second, good)).toBe(false);
      expect(verify(m, 2 * n, first, second, good)).toBe(false);
    }
    // a power-of-two first tree: its own root starts the path
    const p = consistencyProof(16, 50, accessor(50).subtree);
    expect(verifyConsistency(16, 50, mth(entries.slice(0, 16)), second, p)).toBe(true);
    expect(verifyConsistency(16, 50, mth(entries.slice(0, 15)), second, p)).toBe(false);
  });

  it('refuse sizes out of order or below one', () => {
    expect(() => consistencyProof(6, 5, accessor(6).subtree)).toThrow(RangeError);
    expect(() => consistencyProof(0, 5, accessor(5).subtree)).toThrow(RangeError);
    expect(verifyConsistency(6, 5, EMPTY_ROOT, EMPTY_ROOT, [])).toBe(false);
  });
});

describe('appending', () => {
  it('completes every aligned subtree exactly once, with the RFC hash, whatever the batch sizes', () => {
    const stored = new Map<string, Buffer>();
    let size = 0;
    let batch = 1;
    while (size < N) {
      const count = Math.min(batch, N - size);
      // the old tree as a store holds it: leaf hashes and the subtrees completed so far
      const subtree = (level: number, index: number) => (level === 0 ? leafHash(entries[index]!) : stored.get(`${level}:${index}`)!);
      const { nodes, root } = appendLeaves(size, subtree, entries.slice(size, size + count).map((e) => leafHash(e)));
      for (const node of nodes) {
        const key = `${node.level}:${node.index}`;
        expect(stored.has(key), `${key} completed twice`).toBe(false);
        stored.set(key, node.hash);
      }
      size += count;
      expect(root.toString('hex'), `root at ${size}`).toBe(mth(entries.slice(0, size)).toString('hex'));
      batch = (batch * 3) % 11 || 1;
    }
    // every complete aligned subtree of level >= 1 in 64 leaves: 32 + 16 + 8 + 4 + 2 + 1
    expect(stored.size).toBe(63);
    for (const [key, hash] of stored) {
      const [level, index] = key.split(':').map(Number) as [number, number];
      expect(hash.equals(mth(entries.slice(index * 2 ** level, (index + 1) * 2 ** level))), key).toBe(true);
    }
  });
});
