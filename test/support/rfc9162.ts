// RFC 9162 written out again from its text, independently of lib/transparency/merkle.ts, so that
// tests judge the log by the RFC and not by its own code: the recursive definitions of MTH, PATH
// and PROOF (section 2.1) and the two verification algorithms (sections 2.1.3.2 and 2.1.4.2).
import crypto from 'node:crypto';

export const H = (...parts: Buffer[]) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
const k = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1); // the largest power of two smaller than n (n > 1)

/** MTH(D[n]) */
export function mth(d: readonly Buffer[]): Buffer {
  if (d.length === 0) return H();
  if (d.length === 1) return H(Buffer.of(0), d[0]!);
  const s = k(d.length);
  return H(Buffer.of(1), mth(d.slice(0, s)), mth(d.slice(s)));
}

/** PATH(m, D[n]) */
export function path(m: number, d: readonly Buffer[]): Buffer[] {
  if (d.length <= 1) return [];
  const s = k(d.length);
  return m < s ? [...path(m, d.slice(0, s)), mth(d.slice(s))] : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}

/** SUBPROOF(m, D[n], b) */
function subproof(m: number, d: readonly Buffer[], b: boolean): Buffer[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  return m <= s ? [...subproof(m, d.slice(0, s), b), mth(d.slice(s))] : [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}
export const proof = (m: number, d: readonly Buffer[]) => subproof(m, d, true);

// ---- RFC 9162 sections 2.1.3.2 and 2.1.4.2, written out ----
const lsb = (x: number) => (x & 1) === 1;

export function rfcVerifyInclusion(leafIndex: number, treeSize: number, hash: Buffer, inclusionPath: readonly Buffer[], rootHash: Buffer): boolean {
  if (leafIndex >= treeSize) return false;
  let fn = leafIndex;
  let sn = treeSize - 1;
  let r = hash;
  for (const p of inclusionPath) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      r = H(Buffer.of(1), p, r);
      if (!lsb(fn)) while (!(lsb(fn) || fn === 0)) [fn, sn] = [fn >> 1, sn >> 1];
    } else {
      r = H(Buffer.of(1), r, p);
    }
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return sn === 0 && r.equals(rootHash);
}

export function rfcVerifyConsistency(first: number, second: number, firstHash: Buffer, secondHash: Buffer, consistencyPath: readonly Buffer[]): boolean {
  if (first === second) return consistencyPath.length === 0 && firstHash.equals(secondHash); // outside the RFC's 0 < first < second
  if (consistencyPath.length === 0) return false;
  const p = (first & (first - 1)) === 0 ? [firstHash, ...consistencyPath] : [...consistencyPath];
  let fn = first - 1;
  let sn = second - 1;
  while (lsb(fn)) [fn, sn] = [fn >> 1, sn >> 1];
  let fr = p[0]!;
  let sr = p[0]!;
  for (const c of p.slice(1)) {
    if (sn === 0) return false;
    if (lsb(fn) || fn === sn) {
      fr = H(Buffer.of(1), c, fr);
      sr = H(Buffer.of(1), c, sr);
      if (!lsb(fn)) while (!(lsb(fn) || fn === 0)) [fn, sn] = [fn >> 1, sn >> 1];
    } else {
      sr = H(Buffer.of(1), sr, c);
    }
    [fn, sn] = [fn >> 1, sn >> 1];
  }
  return fr.equals(firstHash) && sr.equals(secondHash) && sn === 0;
}

/** MTH of entries given as their bytes (text is UTF-8). */
export const rootOfEntries = (entries: readonly (string | Buffer)[]) => mth(entries.map((e) => (typeof e === 'string' ? Buffer.from(e) : e)));

/** SHA-256(0x00 || entry) */
export const rfcLeafHash = (entry: string | Buffer) => mth([typeof entry === 'string' ? Buffer.from(entry) : entry]);
