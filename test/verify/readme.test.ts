// The README's first certificate check, as a newcomer types it after `make demo`: every command of
// its block but the key's (the test API issues that key), against the test API's address in place
// of localhost:8080. It verifies a certificate the service actually has, whenever it runs.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner } from '../../lib/signer.js';
import { signHead } from '../../pipeline/transparency.js';
import { startTestApi, type TestApi } from '../support/api.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-readme-'));
let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ hours: 1 });
  // the log's signed head, as the pipeline signs one after publishing (the test API certifies only)
  await signHead(t.db.sql, createSigner({ hmacSecret: t.config.certSecret, ed25519PrivateKeyPem: t.config.certEd25519Key, keyDir: path.join(t.config.varDir, 'keys') }), new Date());
}, 300_000);
afterAll(async () => {
  await t?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The sh block of the README's "A first request" section that runs afrates-verify.mjs. */
function readmeBlock(): string[] {
  const section = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split(/^## /m).find((s) => s.startsWith('A first request'))!;
  const block = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((b) => b.includes('afrates-verify.mjs'));
  expect(block).toBeDefined();
  return block!.trim().split('\n');
}

it("verifies a certificate with the README's commands as written", async () => {
  const lines = readmeBlock();
  expect(lines[0]).toMatch(/^KEY=\$\(make -s key DEMO=1 TIER=enterprise /);
  const host = new URL(t.api.url).host;
  const script = lines.slice(1).map((l) => l.replaceAll('http://localhost:8080', t.api.url).replaceAll('localhost:8080', host)).join('\n');
  // asynchronously: the API answering it runs in this process
  const r = await new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) =>
    execFile('bash', ['-e', '-c', script], { cwd: dir, env: { ...process.env, KEY: t.keys.enterprise }, encoding: 'utf8', timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ status: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    ),
  );
  expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
  expect(r.stdout).toMatch(/^result: ok/m);
});
