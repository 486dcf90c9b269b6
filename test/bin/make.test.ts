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
  const { NAME: _n, PARTS: _p, ...env } = process.env; // what a target reads from the environment, given by args alone
  const r = spawnSync('make', ['--no-print-directory', '-f', file, ...args], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
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

describe('make bench', () => {
  // TSX=echo: what each benchmark would be run with, without running it
  it('runs only the benchmarks NAME names, in that order, with PARTS as their arguments', () => {
    const r = make(['-s', 'bench', 'NAME=web,api', 'PARTS=sse demo', 'TSX=echo']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(['== bench/web.bench.ts', 'bench/web.bench.ts sse demo', '== bench/api.bench.ts', 'bench/api.bench.ts sse demo']);
  });

  it('refuses a name that is no benchmark before running any, naming those there are', () => {
    const r = make(['-s', 'bench', 'NAME=api,nope', 'TSX=echo']);
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/no benchmark named 'nope'; there are: .*\bapi\b.*\bstreams\b/);
  });

  it('runs every benchmark without NAME', () => {
    const r = make(['-s', 'bench', 'TSX=echo']);
    const ran = r.stdout.split('\n').filter((l) => l.startsWith('== ')).map((l) => l.slice(3));
    expect(ran).toEqual(fs.readdirSync(path.join(root, 'bench')).filter((f) => f.endsWith('.bench.ts')).sort().map((f) => `bench/${f}`));
  });
});
