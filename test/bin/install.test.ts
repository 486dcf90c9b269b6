// The install a newcomer runs first (make install: npm ci) on the Node this machine has: nothing
// to warn about, neither a package that asks for another Node nor an install script nobody
// reviewed; and the Node range package.json states is the one every locked package accepts.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-install-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string }; allowScripts?: Record<string, boolean> };
const lock = JSON.parse(fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string }; hasInstallScript?: boolean }> };

describe('npm ci', () => {
  it('has nothing to warn about on the Node running this test', () => {
    // the lock and package.json alone, in a directory of their own: what a fresh clone installs
    fs.copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
    fs.copyFileSync(path.join(root, 'package-lock.json'), path.join(dir, 'package-lock.json'));
    const r = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund'], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split('\n').filter((l) => /^npm (warn|WARN)/.test(l))).toEqual([]);
  });

  it('states the Node versions its packages accept (vite: 20.19, 22.12), and decides each install script', () => {
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    const scripted = Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([name]) => name.split('node_modules/').at(-1)!);
    for (const name of scripted) expect(typeof pkg.allowScripts?.[name], name).toBe('boolean');
  });
});
