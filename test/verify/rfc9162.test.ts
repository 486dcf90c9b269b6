// The two verifiers' transparency-log algorithms (RFC 9162 sections 2.1.3.2 and 2.1.4.2, written
// in each verifier from the RFC) judged by the RFC's own recursive definitions of the tree, its
// audit paths and its consistency proofs (test/support/rfc9162.ts): for every tree of up to 40
// leaves, every leaf's path and every older tree's proof verify, and a proof with one hash
// changed, a hash too many or too few, the wrong index or the wrong root does not.
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { mth, path as auditPath, proof as consistencyProof, rfcLeafHash } from '../support/rfc9162.js';
import { NODE_VERIFIER, PYTHON, PYTHON_VERIFIER, requirePythonCryptography } from './support.js';

const MAX = 40;
/** The entries (as the log holds them: bytes hashed into leaves) */
const entries = Array.from({ length: MAX }, (_, i) => Buffer.from(`{"id":"ENTRY-${i}"}`));
const hex = (b: Buffer) => b.toString('hex');
const other = crypto.createHash('sha256').update('not in the tree').digest();

interface InclusionCase {
  index: number;
  size: number;
  leaf: string;
  path: string[];
  root: string;
}
interface ConsistencyCase {
  first: number;
  second: number;
  firstRoot: string;
  secondRoot: string;
  proof: string[];
}

/** A genuine case and its spoiled variants; `valid` says which verify. */
function inclusionCases(): { c: InclusionCase; valid: boolean }[] {
  const out: { c: InclusionCase; valid: boolean }[] = [];
  for (let size = 1; size <= MAX; size++) {
    const d = entries.slice(0, size);
    const root = hex(mth(d));
    for (let index = 0; index < size; index++) {
      const p = auditPath(index, d).map(hex);
      const c = { index, size, leaf: hex(rfcLeafHash(d[index]!)), path: p, root };
      out.push({ c, valid: true });
      for (let k = 0; k < p.length; k++) out.push({ c: { ...c, path: p.map((h, j) => (j === k ? hex(other) : h)) }, valid: false });
      out.push({ c: { ...c, path: [...p, hex(other)] }, valid: false });
      if (p.length > 0) out.push({ c: { ...c, path: p.slice(0, -1) }, valid: false });
      if (size > 1) out.push({ c: { ...c, index: (index + 1) % size }, valid: false });
      out.push({ c: { ...c, index: size }, valid: false });
      out.push({ c: { ...c, root: hex(other) }, valid: false });
    }
  }
  return out;
}

function consistencyCases(): { c: ConsistencyCase; valid: boolean }[] {
  const out: { c: ConsistencyCase; valid: boolean }[] = [];
  for (let second = 2; second <= MAX; second++) {
    const d = entries.slice(0, second);
    const secondRoot = hex(mth(d));
    for (let first = 1; first < second; first++) {
      const p = consistencyProof(first, d).map(hex);
      const c = { first, second, firstRoot: hex(mth(d.slice(0, first))), secondRoot, proof: p };
      out.push({ c, valid: true });
      for (let k = 0; k < p.length; k++) out.push({ c: { ...c, proof: p.map((h, j) => (j === k ? hex(other) : h)) }, valid: false });
      out.push({ c: { ...c, proof: [...p, hex(other)] }, valid: false });
      out.push({ c: { ...c, proof: p.slice(0, -1) }, valid: false });
      out.push({ c: { ...c, firstRoot: hex(other) }, valid: false });
      out.push({ c: { ...c, secondRoot: hex(other) }, valid: false });
      // a first tree whose root was rewritten, and the proof of the rewritten history
      const forged = [...d];
      forged[first - 1] = other;
      out.push({ c: { ...c, proof: consistencyProof(first, forged).map(hex), secondRoot: hex(mth(forged)) }, valid: false });
    }
  }
  return out;
}

const unhex = (h: string) => Buffer.from(h, 'hex');

/** The Python verifier's verdict on each case, in order. */
function python(kind: 'inclusion' | 'consistency', cases: readonly (InclusionCase | ConsistencyCase)[]): boolean[] {
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(path.dirname(PYTHON_VERIFIER))})`,
    'import afrates_verify as v',
    'b = bytes.fromhex',
    'out = []',
    'for c in json.load(sys.stdin):',
    kind === 'inclusion'
      ? '    out.append(v.verify_inclusion(c["index"], c["size"], b(c["leaf"]), [b(h) for h in c["path"]], b(c["root"])))'
      : '    out.append(v.verify_consistency(c["first"], c["second"], b(c["firstRoot"]), b(c["secondRoot"]), [b(h) for h in c["proof"]]))',
    'json.dump(out, sys.stdout)',
  ].join('\n');
  const run = spawnSync(PYTHON, ['-B', '-c', script], { input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(run.status, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as boolean[];
}

let node: {
  verifyInclusion(index: number, size: number, leaf: Buffer, path: Buffer[], root: Buffer): boolean;
  verifyConsistency(first: number, second: number, firstRoot: Buffer, secondRoot: Buffer, proof: Buffer[]): boolean;
};

beforeAll(async () => {
  requirePythonCryptography();
  node = await import(pathToFileURL(NODE_VERIFIER).href);
});

describe("the verifiers' RFC 9162 algorithms, against the RFC's definitions", () => {
  it(`inclusion (section 2.1.3.2): every leaf of every tree of up to ${MAX} leaves, and spoiled proofs`, () => {
    const cases = inclusionCases();
    const expected = cases.map((x) => x.valid);
    expect(cases.map(({ c }) => node.verifyInclusion(c.index, c.size, unhex(c.leaf), c.path.map(unhex), unhex(c.root)))).toEqual(expected);
    expect(python('inclusion', cases.map((x) => x.c))).toEqual(expected);
    expect(expected.filter(Boolean)).toHaveLength((MAX * (MAX + 1)) / 2);
  });

  it(`consistency (section 2.1.4.2): every older tree of every tree of up to ${MAX} leaves, and spoiled or forged proofs`, () => {
    const cases = consistencyCases();
    const expected = cases.map((x) => x.valid);
    expect(cases.map(({ c }) => node.verifyConsistency(c.first, c.second, unhex(c.firstRoot), unhex(c.secondRoot), c.proof.map(unhex)))).toEqual(expected);
    expect(python('consistency', cases.map((x) => x.c))).toEqual(expected);
    expect(expected.filter(Boolean)).toHaveLength((MAX * (MAX - 1)) / 2);
  });
});
