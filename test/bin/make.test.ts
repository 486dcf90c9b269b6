// The Makefile as an operator meets it: steps that take minutes say they are still working, and
// options that pick what a target acts on.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-make-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** make in the repository, with extra targets from `extra` (a makefile that includes ours). */
function make(args: string[], extra = ''): { status: number | null; stdout: string; stderr: string } {
  const file = path.join(dir, 'extra.mk');
  fs.writeFileSync(file, `include ${path.join(root, 'Makefile')}\n${extra}`);
  const r = spawnSync('make', ['--no-print-directory', '-f', file, ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('a long step', () => {
  it('says it is still working while it runs, on stderr, and keeps its exit status', () => {
    const r = make(['-s', 'slow', 'TICK_SECONDS=1'], `slow:\n\t@$(TICKING) "a slow step" sh -c 'sleep 2.5; echo its own output; exit 3'\n`);
    expect(r.stderr).toContain('a slow step: still working (1 s)');
    expect(r.stderr).toContain('a slow step: still working (2 s)');
    expect(r.stderr).toContain('its own output');
    expect(r.stdout).toBe(''); // KEY=$(make -s key ...) captures the key alone, even when it installs first
    expect(r.status).not.toBe(0);
  });

  it('is how the install and the web build run', () => {
    const r = make(['-n', '-B', 'web']);
    const lines = r.stdout.split('\n');
    expect(lines.find((l) => l.includes('npm ci --'))).toMatch(/ ticking "installing dependencies" npm ci /);
    expect(lines.find((l) => l.includes('vite build --'))).toMatch(/ ticking "building the web front end" .*vite build /);
  });
});
