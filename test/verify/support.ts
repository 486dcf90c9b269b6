// The two certificate verifiers (verify/) run as a customer runs them: as programs, Node's and
// Debian's Python, on files or against the API. And the test's own exact arithmetic, to check a
// signed rate against trades the test wrote itself.
import { spawn, spawnSync } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NODE_VERIFIER = path.join(ROOT, 'verify/afrates-verify.mjs');
export const PYTHON_VERIFIER = path.join(ROOT, 'verify/afrates_verify.py');
/** Debian's Python, as CI has it (with python3-cryptography installed by .ci/run). */
export const PYTHON = '/usr/bin/python3';

export type Verifier = 'node' | 'python';
export const VERIFIERS: readonly Verifier[] = ['node', 'python'];

export interface VerifierRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** check name -> ok | FAIL | skip, from the report's lines */
  readonly checks: ReadonlyMap<string, string>;
  /** the checks that failed */
  readonly failed: readonly string[];
  /** the report's `rate:` line */
  readonly rate: string | undefined;
}

/** Fails with a clear message when Debian's Python cannot import `cryptography`. */
export function requirePythonCryptography(): void {
  const probe = spawnSync(PYTHON, ['-c', 'from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      `${PYTHON} cannot import cryptography (${probe.error?.message ?? probe.stderr.trim().split('\n').at(-1)}): ` +
        'the Python verifier needs Debian\'s python3-cryptography (apt-get install python3-cryptography; .ci/run installs it when missing)',
    );
  }
}

/** Runs one verifier with these arguments and reads its report. */
export function runVerifier(which: Verifier, args: readonly string[]): Promise<VerifierRun> {
  const [cmd, script] = which === 'node' ? [process.execPath, NODE_VERIFIER] : [PYTHON, PYTHON_VERIFIER];
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const checks = new Map<string, string>();
      for (const m of stdout.matchAll(/^(ok|FAIL|skip) ([a-z0-9 ]+): /gm)) checks.set(m[2]!, m[1]!);
      resolve({
        code,
        stdout,
        stderr,
        checks,
        failed: [...checks].filter(([, s]) => s === 'FAIL').map(([n]) => n),
        rate: /^rate: (.*)$/m.exec(stdout)?.[1],
      });
    });
  });
}

/** Both verifiers on the same arguments; they must print the same report. */
export async function both(args: readonly string[]): Promise<Record<Verifier, VerifierRun>> {
  const [node, python] = await Promise.all(VERIFIERS.map((v) => runVerifier(v, args)));
  expect(python!.stdout, `the two verifiers disagree\n--- node\n${node!.stdout}${node!.stderr}\n--- python\n${python!.stdout}${python!.stderr}`).toBe(node!.stdout);
  return { node: node!, python: python! };
}

/** Canonical JSON as the service writes what it hashes and signs (keys sorted, no whitespace): a tampered document stays well formed. */
export const canonical = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(canonical).join(',')}]`
    : v !== null && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

export interface Proxy {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * An HTTP proxy in front of the API, as a man in the middle would be: it passes every GET on
 * (with its headers) and hands each answer's body to `rewrite` (by path) before passing it back.
 */
export async function startProxy(target: string, rewrite: (path: string, body: Buffer) => Buffer): Promise<Proxy> {
  const server = http.createServer((req, res) => {
    void (async () => {
      const headers: Record<string, string> = {};
      for (const name of ['accept', 'x-api-key']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
      // asked for plain bodies, so that they can be rewritten
      const upstream = await fetch(`${target}${req.url}`, { headers: { ...headers, 'accept-encoding': 'identity' } });
      const body = rewrite(req.url!, Buffer.from(await upstream.arrayBuffer()));
      res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json', 'content-length': body.length });
      res.end(body);
    })().catch((err: unknown) => {
      res.writeHead(502).end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

// ---- exact arithmetic of the test's own: BigInt rationals ----

interface Q {
  n: bigint;
  d: bigint;
}
const dec = (s: string): Q => {
  const [whole, frac = ''] = s.split('.');
  return { n: BigInt(whole! + frac), d: 10n ** BigInt(frac.length) };
};

/** sum(price x amount) / sum(amount) over the trades, rounded half-even to `digits` significant digits. */
export function vwapText(trades: readonly { price: string; amount: string }[], digits = 12): string {
  let pv: Q = { n: 0n, d: 1n };
  let vol: Q = { n: 0n, d: 1n };
  for (const t of trades) {
    const p = dec(t.price);
    const a = dec(t.amount);
    pv = { n: pv.n * p.d * a.d + p.n * a.n * pv.d, d: pv.d * p.d * a.d };
    vol = { n: vol.n * a.d + a.n * vol.d, d: vol.d * a.d };
  }
  // rate = (pv.n * vol.d) / (pv.d * vol.n); scale to `digits` significant digits
  const n = pv.n * vol.d;
  const d = pv.d * vol.n;
  let e = 0; // 10^e <= n/d < 10^(e+1)
  while (n >= d * 10n ** BigInt(e + 1)) e++;
  while (e <= 0 && n * 10n ** BigInt(-e) < d) e--;
  const places = digits - 1 - e;
  const [sn, sd] = places >= 0 ? [n * 10n ** BigInt(places), d] : [n, d * 10n ** BigInt(-places)];
  let r = sn / sd;
  const rem2 = 2n * (sn % sd);
  if (rem2 > sd || (rem2 === sd && r % 2n === 1n)) r++;
  if (places <= 0) return (r * 10n ** BigInt(-places)).toString();
  const s = r.toString().padStart(places + 1, '0');
  return `${s.slice(0, -places)}.${s.slice(-places)}`.replace(/\.?0+$/, '');
}
