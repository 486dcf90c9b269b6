// The Merkle tree of RFC 9162 (section 2.1), as pure functions: hashes, roots, inclusion and
// consistency proofs, and their verification. Proofs are written against an accessor for the hash
// of a complete, aligned subtree (level l, index i covers leaves [i * 2^l, (i + 1) * 2^l)), the
// only nodes the log stores; a subtree on the tree's right edge that is not complete is folded from
// its complete pieces (at most one per level), so nothing is ever recomputed from every leaf.
import crypto from 'node:crypto';

export type Hash = Buffer;

/** A complete, aligned subtree: leaves [index * 2^level, (index + 1) * 2^level). */
export interface Node {
  readonly level: number;
  readonly index: number;
}

/** The hash of a complete, aligned subtree (level 0: a leaf hash). */
export type SubtreeHash = (level: number, index: number) => Hash;

/** Leaves [start, end) of a subtree the RFC's recursion reaches (start is a multiple of a power of two >= end - start). */
interface Range {
  readonly start: number;
  readonly end: number;
}

const sha256 = (...parts: Uint8Array[]): Hash => {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);

/** MTH({}): SHA-256 of the empty string. */
export const EMPTY_ROOT: Hash = sha256();

/** MTH({d}) = SHA-256(0x00 || d). */
export function leafHash(entry: Uint8Array | string): Hash {
  return sha256(LEAF_PREFIX, typeof entry === 'string' ? Buffer.from(entry, 'utf8') : entry);
}

/** SHA-256(0x01 || left || right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Hash {
  return sha256(NODE_PREFIX, left, right);
}

/** The largest power of two smaller than n (n >= 2): the RFC's split point k. */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function checkSize(name: string, n: number, min: number): void {
  if (!Number.isSafeInteger(n) || n < min) throw new RangeError(`${name} must be an integer >= ${min}, got ${n}`);
}

/** The complete, aligned subtrees that make up a range, largest (leftmost) first: one per set bit of its length. */
export function piecesOf(start: number, end: number): Node[] {
  const pieces: Node[] = [];
  let at = start;
  let size = 1;
  let level = 0;
  while (size * 2 <= end - start) {
    size *= 2;
    level++;
  }
  for (; at < end; size /= 2, level--) {
    if (at + size <= end) {
      pieces.push({ level, index: at / size });
      at += size;
    }
  }
  return pieces;
}

/** MTH of a range: its complete pieces folded from the right (the RFC splits at the largest power of two first). */
function rangeHash(range: Range, subtree: SubtreeHash): Hash {
  const pieces = piecesOf(range.start, range.end);
  let hash = subtree(pieces.at(-1)!.level, pieces.at(-1)!.index);
  for (let i = pieces.length - 2; i >= 0; i--) hash = nodeHash(subtree(pieces[i]!.level, pieces[i]!.index), hash);
  return hash;
}

/** MTH(D[0:size]). */
export function rootAt(size: number, subtree: SubtreeHash): Hash {
  checkSize('tree size', size, 0);
  return size === 0 ? EMPTY_ROOT : rangeHash({ start: 0, end: size }, subtree);
}

/** PATH(index, D[0:size]) as the ranges whose MTHs it lists, leaf side first (section 2.1.3.1). */
function inclusionRanges(index: number, size: number): Range[] {
  const path: Range[] = [];
  let start = 0;
  let end = size;
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (index < start + k) {
      path.push({ start: start + k, end });
      end = start + k;
    } else {
      path.push({ start, end: start + k });
      start += k;
    }
  }
  return path.reverse();
}

/** PROOF(first, D[0:second]) = SUBPROOF(first, D[0:second], true) as ranges, deepest first (section 2.1.4.1). */
function consistencyRanges(first: number, second: number): Range[] {
  const proof: Range[] = [];
  let start = 0;
  let end = second;
  let whole = true; // SUBPROOF's b: the subtree [start, end) is still the old tree's whole root side
  while (first < end) {
    const k = splitPoint(end - start);
    if (first - start <= k) {
      proof.push({ start: start + k, end });
      end = start + k;
    } else {
      proof.push({ start, end: start + k });
      start += k;
      whole = false;
    }
  }
  if (!whole) proof.push({ start, end }); // SUBPROOF(m, D[m], false) = {MTH(D[m])}
  return proof.reverse();
}

/** Every complete subtree a list of ranges is folded from, each once: what a store fetches for a proof. */
function nodesOf(ranges: readonly Range[]): Node[] {
  const seen = new Map<string, Node>();
  for (const r of ranges) for (const n of piecesOf(r.start, r.end)) seen.set(`${n.level}:${n.index}`, n);
  return [...seen.values()];
}

/** The nodes rootAt(size) reads: the tree's frontier, the only subtrees an append can extend. */
export const rootNodes = (size: number): Node[] => piecesOf(0, size);

/** The nodes inclusionProof(index, size) reads. */
export function inclusionNodes(index: number, size: number): Node[] {
  checkInclusion(index, size);
  return nodesOf(inclusionRanges(index, size));
}

/** The nodes consistencyProof(first, second) reads. */
export function consistencyNodes(first: number, second: number): Node[] {
  checkConsistency(first, second);
  return nodesOf(consistencyRanges(first, second));
}

function checkInclusion(index: number, size: number): void {
  checkSize('leaf index', index, 0);
  checkSize('tree size', size, 1);
  if (index >= size) throw new RangeError(`leaf index ${index} is not below tree size ${size}`);
}

function checkConsistency(first: number, second: number): void {
  checkSize('first tree size', first, 1);
  checkSize('second tree size', second, 1);
  if (first > second) throw new RangeError(`first tree size ${first} is larger than the second, ${second}`);
}

/** The audit path of leaf `index` in the tree of `size` leaves. */
export function inclusionProof(index: number, size: number, subtree: SubtreeHash): Hash[] {
  checkInclusion(index, size);
  return inclusionRanges(index, size).map((r) => rangeHash(r, subtree));
}

/** The consistency proof between the trees of `first` and `second` leaves (empty when they are equal). */
export function consistencyProof(first: number, second: number, subtree: SubtreeHash): Hash[] {
  checkConsistency(first, second);
  return consistencyRanges(first, second).map((r) => rangeHash(r, subtree));
}

/** A node completed by an append, to be stored (level >= 1: leaf hashes are stored with their entries). */
interface StoredNode extends Node {
  readonly hash: Hash;
}

/**
 * Appends leaves to the tree of `size` leaves: every subtree they complete, and the root after
 * them. `subtree` gives the old tree's hashes; only its frontier (rootNodes(size)) is read.
 */
export function appendLeaves(size: number, subtree: SubtreeHash, leaves: readonly Hash[]): { nodes: StoredNode[]; root: Hash } {
  const stack = rootNodes(size).map((p) => ({ level: p.level, hash: subtree(p.level, p.index) }));
  const nodes: StoredNode[] = [];
  let n = size;
  for (const leaf of leaves) {
    stack.push({ level: 0, hash: leaf });
    n++;
    // two neighbours of one level merge into the subtree above them, which ends at leaf n - 1
    while (stack.length >= 2 && stack.at(-1)!.level === stack.at(-2)!.level) {
      const right = stack.pop()!;
      const left = stack.pop()!;
      const level = right.level + 1;
      const hash = nodeHash(left.hash, right.hash);
      stack.push({ level, hash });
      nodes.push({ level, index: n / 2 ** level - 1, hash });
    }
  }
  const byLevel = new Map(stack.map((s) => [s.level, s.hash]));
  return { nodes, root: rootAt(n, (level) => byLevel.get(level)!) };
}
