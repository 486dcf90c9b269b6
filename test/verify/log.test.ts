// The transparency log checked by someone who trusts none of our code: certificates issued by the
// real cycle (a replayed market collected over ccxt, settled, certified, appended to the log, a
// head signed after each publish) are proved included under the newest signed head by the two
// verifiers in verify/ (Node's and Debian's Python), over HTTP and from saved files; an entry, an
// audit path or a head signature changed on the way makes them fail, naming the check. And the
// monitor: a head saved earlier, the log grown since, says the log only grew; a log rewritten
// behind the service's back, as a forger with the tables' owner's rights would, fails it.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../../pipeline/runner.js';
import { insertFxRates } from '../../pipeline/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { rng } from '../support/market.js';
import { SimWorld } from '../support/pipeline.js';
import { rfcLeafHash } from '../support/rfc9162.js';
import { forgeEntry } from '../support/transparency.js';
import { both, canonical, requirePythonCryptography, runVerifier, startProxy, VERIFIERS } from './support.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 20, 10, 0);
const stamp = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
const TARGET = { pair: 'BTCZAR', bucket: T0 + 5 * MIN, id: 'CERT-BTCZAR-20261120T100500Z' };

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-verify-log-'));
const replay = path.join(dir, 'market.jsonl');

/** An hour of trading from T0: BTCZAR on Luno and VALR, BTCUSDT on Binance (the synthetic price's leg). */
function writeReplay(): void {
  const random = rng(9162);
  const lines: string[] = [];
  let id = 1;
  for (const [n, [venue, pair, level]] of ([['luno', 'BTCZAR', 1_627_000], ['valr', 'BTCZAR', 1_628_500], ['binance', 'BTCUSDT', 90_000]] as const).entries()) {
    for (let t = T0 + 7_000 + n * 13; t < T0 + 60 * MIN; t += 30_000 + Math.floor(random() * 40_000)) {
      const price = (level * (1 + (random() - 0.5) * 0.004)).toFixed(2);
      const amount = (0.0001 + random() * 0.5).toFixed(8);
      lines.push(JSON.stringify({ venue, pair, time: new Date(t).toISOString(), id: String(id++), price, amount, side: random() < 0.5 ? 'buy' : 'sell' }));
    }
  }
  fs.writeFileSync(replay, `${lines.join('\n')}\n`);
}
writeReplay();

const w = new SimWorld({ seed: 1, start: T0, historyMs: 0, replay });
let api: TestApi;
let pipeline: Pipeline;
const keysFile = path.join(dir, 'keys.json');

interface Head {
  tree_size: number;
  root_hash: string;
  timestamp: string;
  signature: string;
  signed_payload: string;
}

async function getBytes(urlPath: string, key?: string): Promise<Buffer> {
  const res = await fetch(`${api.api.url}${urlPath}`, { headers: key ? { 'X-API-Key': key } : {} });
  expect(res.status, urlPath).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}
const getJson = async (urlPath: string) => JSON.parse((await getBytes(urlPath)).toString('utf8'));
const write = (name: string, content: string | Buffer) => {
  const file = path.join(dir, name);
  fs.writeFileSync(file, content);
  return file;
};
const entries = async () => (await w.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM transparency_entries`)[0]!.n;

/** Runs the pipeline a minute at a time until the clock reaches `until`. */
async function runUntil(until: number): Promise<void> {
  while (w.clock < until) await w.minutes(pipeline, 1);
}

beforeAll(async () => {
  requirePythonCryptography();
  api = await startTestApi({ db: w.db });
  pipeline = w.pipeline({ env: { SETTLE_AFTER_SECONDS: '600' } });
  const fxAt = new Date(T0 - 30 * MIN);
  await insertFxRates(w.db.sql, [{ time: fxAt, currency: 'ZAR', unitsPerUsd: 18.0625, source: 'coinbase', sourceUpdatedAt: fxAt }]);
  await runUntil(T0 + 20 * MIN);
  fs.writeFileSync(keysFile, await getBytes('/v1/certificates/keys'));
}, 300_000);

afterAll(async () => {
  await api?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("a certificate's place in the log", () => {
  const urlArgs = (base: string) => ['--url', base, '--key', api.keys.enterprise, '--pair', TARGET.pair, '--time', stamp(TARGET.bucket)];
  let files: { cert: string; bundle: string; head: string; proof: string };
  let head: Head;
  let proof: { entry: string; leaf_hash: string; leaf_index: number; audit_path: string[] };
  const fileArgs = (f: Partial<typeof files> = {}) => {
    const s = { ...files, ...f };
    return ['--certificate', s.cert, '--bundle', s.bundle, '--keys', keysFile, '--head', s.head, '--proof', s.proof];
  };

  beforeAll(async () => {
    const certPath = `/v1/certificates/${TARGET.pair}/${encodeURIComponent(stamp(TARGET.bucket))}`;
    const headBytes = await getBytes('/v1/transparency/head');
    head = JSON.parse(headBytes.toString('utf8'));
    const proofBytes = await getBytes(`/v1/transparency/proof/inclusion?id=${TARGET.id}&tree_size=${head.tree_size}`);
    proof = JSON.parse(proofBytes.toString('utf8'));
    files = {
      cert: write('cert.json', await getBytes(certPath, api.keys.enterprise)),
      bundle: write('bundle.json', await getBytes(`${certPath}/bundle`, api.keys.enterprise)),
      head: write('head.json', headBytes),
      proof: write('proof.json', proofBytes),
    };
  });

  it('is logged as the methodology says: canonical JSON of its id, kind, pair, time, signed rate and the SHA-256 of the certificate and its bundle', () => {
    const cert = JSON.parse(fs.readFileSync(files.cert, 'utf8'));
    const bundle = fs.readFileSync(files.bundle);
    const { customer: _customer, ...record } = cert;
    const sha = (b: string | Buffer) => crypto.createHash('sha256').update(b).digest('hex');
    expect(proof.entry).toBe(
      canonical({
        id: TARGET.id,
        kind: 'certificate',
        pair: TARGET.pair,
        time: stamp(TARGET.bucket),
        rate: JSON.parse(cert.audit.signed_payload).rate,
        certificate_sha256: sha(canonical(record)),
        bundle_sha256: sha(bundle),
      }),
    );
    expect(sha(bundle)).toBe(cert.bundle.sha256);
  });

  it('both verifiers prove it included under the newest signed head, over --url and from saved files', async () => {
    const remote = await both(urlArgs(api.api.url));
    const saved = await both(fileArgs());
    for (const run of [remote.node, remote.python, saved.node, saved.python]) {
      expect(run.code, run.stdout).toBe(0);
      expect(run.checks.get('log head')).toBe('ok');
      expect(run.checks.get('log inclusion')).toBe('ok');
    }
    expect(saved.node.stdout).toContain(`ok log head: ${head.tree_size} entries, root ${head.root_hash}, signed ${head.timestamp}; the signature verifies with key`);
    expect(saved.node.stdout).toContain(`ok log inclusion: ${TARGET.id} is leaf ${proof.leaf_index} of the tree of ${head.tree_size} entries`);
    // --no-log says it skipped them
    const skipped = await both([...urlArgs(api.api.url), '--no-log']);
    expect(skipped.node.code).toBe(0);
    expect(skipped.node.checks.get('log head')).toBe('skip');
    expect(skipped.node.checks.get('log inclusion')).toBe('skip');
  });

  describe('fails, naming the log check', () => {
    async function expectLogFailure(args: string[], failed: string[]) {
      const run = await both(args);
      for (const v of VERIFIERS) {
        expect(run[v].code, `${v}\n${run[v].stdout}${run[v].stderr}`).toBe(1);
        expect(run[v].failed, run[v].stdout).toEqual(failed);
      }
      return run.node.stdout;
    }

    it('an entry changed in the proof (its leaf hash recomputed to match)', async () => {
      const rate = JSON.parse(proof.entry).rate as string;
      const forged = proof.entry.replace(`"rate":"${rate}"`, `"rate":"${rate}1"`);
      expect(forged).not.toBe(proof.entry);
      const file = write('proof-entry.json', JSON.stringify({ ...proof, entry: forged, leaf_hash: rfcLeafHash(forged).toString('hex') }));
      const out = await expectLogFailure(fileArgs({ proof: file }), ['log inclusion']);
      expect(out).toMatch(/^FAIL log inclusion: the logged entry differs from the entry built from the certificate and its bundle in rate$/m);
      // a leaf hash that is not the served entry's is named too
      const mismatched = write('proof-leaf.json', JSON.stringify({ ...proof, leaf_hash: rfcLeafHash(forged).toString('hex') }));
      expect(await expectLogFailure(fileArgs({ proof: mismatched }), ['log inclusion'])).toMatch(/^FAIL log inclusion: leaf_hash "[0-9a-f]{64}" is not SHA-256\(0x00 \|\| entry\) of the entry served$/m);
    });

    it('a hash of the audit path changed', async () => {
      const auditPath = [...proof.audit_path];
      expect(auditPath.length).toBeGreaterThan(0);
      auditPath[0] = crypto.createHash('sha256').update('another subtree').digest('hex');
      const file = write('proof-path.json', JSON.stringify({ ...proof, audit_path: auditPath }));
      const out = await expectLogFailure(fileArgs({ proof: file }), ['log inclusion']);
      expect(out).toMatch(new RegExp(`^FAIL log inclusion: the audit path of ${auditPath.length} hashes from leaf ${proof.leaf_index} does not lead to the head's root`, 'm'));
    });

    it('a head whose signature is changed, or whose signed size is not its own', async () => {
      const sig = head.signature;
      const flipped = `${sig.slice(0, 5)}${sig[5] === 'A' ? 'B' : 'A'}${sig.slice(6)}`;
      const file = write('head-signature.json', JSON.stringify({ ...head, signature: flipped }));
      const out = await expectLogFailure(fileArgs({ head: file }), ['log head']);
      expect(out).toMatch(/^FAIL log head: the signature does not verify with key "/m);
      // the head's size changed beside a signed payload that says otherwise
      const resized = write('head-size.json', JSON.stringify({ ...head, tree_size: head.tree_size + 1 }));
      const again = await expectLogFailure(fileArgs({ head: resized }), ['log head', 'log inclusion']);
      expect(again).toMatch(new RegExp(`^FAIL log head: signed_payload's tree_size is ${head.tree_size}, the head's ${head.tree_size + 1}`, 'm'));
    });

    it('over --url, through a man in the middle who serves another audit path', async () => {
      const proxy = await startProxy(api.api.url, (urlPath, body) => {
        if (!urlPath.startsWith('/v1/transparency/proof/inclusion')) return body;
        const served = JSON.parse(body.toString('utf8'));
        return Buffer.from(JSON.stringify({ ...served, audit_path: [...served.audit_path].reverse() }));
      });
      try {
        expect(proof.audit_path.length).toBeGreaterThan(1);
        const out = await expectLogFailure(urlArgs(proxy.url), ['log inclusion']);
        expect(out).toMatch(/^FAIL log inclusion: the audit path of \d+ hashes from leaf \d+ does not lead to the head's root/m);
      } finally {
        await proxy.close();
      }
    });
  });
});

describe('the monitor', () => {
  // with the keys saved earlier (GET /v1/certificates/keys without an API key spends the address's anonymous budget)
  const monitorArgs = (file: string, extra: string[] = []) => ['--monitor', '--url', api.api.url, '--head', file, '--keys', keysFile, ...extra];
  let savedBytes: Buffer;
  let saved: Head;

  /** Both verifiers' monitor, each with --save on a copy of `bytes` of its own; returns the runs and the files. */
  async function monitorAndSave(bytes: Buffer, tag: string) {
    const files = { node: write(`saved-${tag}-node.json`, bytes), python: write(`saved-${tag}-python.json`, bytes) };
    const [node, python] = await Promise.all(VERIFIERS.map((v) => runVerifier(v, monitorArgs(files[v], ['--save']))));
    // the same report but for the file's name
    expect(python!.stdout.replaceAll(files.python, 'FILE')).toBe(node!.stdout.replaceAll(files.node, 'FILE'));
    return { node: node!, python: python!, files };
  }

  it('says the log only grew since a head saved earlier; --save keeps the current head for the next day', async () => {
    savedBytes = await getBytes('/v1/transparency/head');
    saved = JSON.parse(savedBytes.toString('utf8'));
    await runUntil(T0 + 35 * MIN);
    const current: Head = await getJson('/v1/transparency/head');
    expect(current.tree_size).toBeGreaterThan(saved.tree_size);

    // as the cron line runs it: the keys fetched from the API too
    const run = await both(['--monitor', '--url', api.api.url, '--head', write('saved.json', savedBytes)]);
    for (const v of VERIFIERS) expect(run[v].code, `${v}\n${run[v].stdout}${run[v].stderr}`).toBe(0);
    expect(run.node.stdout).toContain(`ok saved head: ${saved.tree_size} entries, root ${saved.root_hash}`);
    expect(run.node.stdout).toContain(`ok current head: ${current.tree_size} entries, root ${current.root_hash}`);
    expect(run.node.stdout).toMatch(new RegExp(`^ok consistency: ${saved.tree_size} -> ${current.tree_size} entries: a proof of \\d+ hashes leads from the saved root to the current root`, 'm'));
    expect(run.node.stdout).toMatch(new RegExp(`^result: ok, the log only grew \\(${saved.tree_size} -> ${current.tree_size} entries\\)$`, 'm'));

    const kept = await monitorAndSave(savedBytes, 'grew');
    for (const v of VERIFIERS) {
      expect(kept[v].code, kept[v].stdout).toBe(0);
      expect(kept[v].stdout).toContain(`saved: ${kept.files[v]} now holds the current head (${current.tree_size} entries)`);
      expect(JSON.parse(fs.readFileSync(kept.files[v], 'utf8'))).toEqual(current);
    }
    // the next run starts from there: the same head, the same size and root
    const next = await both(monitorArgs(kept.files.node));
    expect(next.node.code, next.node.stdout).toBe(0);
    expect(next.node.stdout).toContain(`ok consistency: the same size, ${current.tree_size} entries, and the same root`);
  });

  it('fails a saved head whose signature was changed', async () => {
    const sig = saved.signature;
    const file = write('saved-bad-signature.json', JSON.stringify({ ...saved, signature: `${sig.slice(0, 5)}${sig[5] === 'A' ? 'B' : 'A'}${sig.slice(6)}` }));
    const run = await both(monitorArgs(file));
    for (const v of VERIFIERS) {
      expect(run[v].code).toBe(1);
      expect(run[v].failed).toEqual(['saved head']);
    }
  });

  it('fails, naming consistency, once the log was rewritten behind the service\'s back, and keeps the saved head', async () => {
    // the certificate's entry, an old leaf under the saved head
    const [victim] = await w.db.sql<{ leaf_index: string; entry: string }[]>`SELECT leaf_index::text, entry FROM transparency_entries WHERE entry_id = ${TARGET.id}`;
    const index = Number(victim!.leaf_index);
    expect(index).toBeLessThan(saved.tree_size);
    const size = await entries();
    const rate = JSON.parse(victim!.entry).rate as string;
    const forged = victim!.entry.replace(`"rate":"${rate}"`, `"rate":"${rate.replace(/^\d/, (d) => String((Number(d) % 9) + 1))}"`);
    expect(forged).not.toBe(victim!.entry);

    // as the tables' owner: the entry rewritten, its leaf hash and every stored subtree above it recomputed
    await forgeEntry(w.db.sql, index, forged, size);

    // the service goes on and signs a new head over the rewritten tree
    await runUntil(T0 + 45 * MIN);
    const current: Head = await getJson('/v1/transparency/head');
    expect(current.tree_size).toBeGreaterThan(size);

    const run = await monitorAndSave(savedBytes, 'forged');
    for (const v of VERIFIERS) {
      expect(run[v].code, `${v}\n${run[v].stdout}${run[v].stderr}`).toBe(1);
      // both heads are genuinely signed: what fails is that the new one does not extend the old
      expect(run[v].failed, run[v].stdout).toEqual(['consistency']);
      expect(run[v].stdout).toMatch(new RegExp(`^FAIL consistency: the proof of \\d+ hashes does not lead from the saved root to the current root: the log no longer holds the ${saved.tree_size} entries it had signed, unchanged$`, 'm'));
      expect(run[v].stdout).toMatch(/^result: FAIL \(consistency\)$/m);
      expect(run[v].stdout).toContain(`not saved: ${run.files[v]} keeps the saved head`);
      expect(fs.readFileSync(run.files[v]).equals(savedBytes)).toBe(true);
    }

    // and the certificate's own check finds its logged entry is not the one its record makes
    const cert = await both(['--url', api.api.url, '--key', api.keys.enterprise, '--pair', TARGET.pair, '--time', stamp(TARGET.bucket)]);
    expect(cert.node.code).toBe(1);
    expect(cert.node.failed).toEqual(['log inclusion']);
    expect(cert.node.stdout).toMatch(/^FAIL log inclusion: the logged entry differs from the entry built from the certificate and its bundle in rate/m);
  });

  it('usage errors exit 2', async () => {
    const head = write('usage-head.json', savedBytes);
    for (const args of [['--monitor'], ['--monitor', '--url', api.api.url], ['--monitor', '--head', head], ['--monitor', '--url', api.api.url, '--head', head, '--key', 'k'], ['--monitor', '--url', api.api.url, '--head', head, '--keys', path.join(dir, 'missing.json')], ['--save', '--url', api.api.url, '--head', head], ['--monitor=1', '--url', api.api.url, '--head', head], ['--monitor', '--url', api.api.url, '--head', path.join(dir, 'missing.json')]]) {
      const run = await both(args);
      for (const v of VERIFIERS) expect(run[v].code, `${v} ${args.join(' ')}\n${run[v].stderr}`).toBe(2);
    }
  });
});
