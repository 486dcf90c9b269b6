// Memory given back: the service, started as make starts it (make run, make demo), runs
// on jemalloc where the system has it, whose background thread returns freed pages to the system
// within seconds; glibc's malloc keeps what is freed below the top of its heaps, and a process that
// once held a burst (a backfill, a large page) held it for good (bench/README.md). The Docker image
// runs with the same settings.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-allocator-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What make evaluates `expression` to, in the project's Makefile. */
async function makeValue(expression: string): Promise<string> {
  const { stdout } = await run('make', ['-s', '--no-print-directory', '--eval', `print-value: ; @echo '${expression}'`, 'print-value'], { cwd: root });
  return stdout.trim();
}

const jemalloc = await makeValue('$(JEMALLOC)');

/** The environment assignments make puts before what `target` starts: a dry run of its recipe. */
async function recipePrefix(target: string, script: string): Promise<string> {
  const { stdout } = await run('make', ['-n', '-s', '--no-print-directory', target], { cwd: root });
  const line = stdout.split('\n').find((l) => l.includes(script));
  if (!line) throw new Error(`make -n ${target} starts no ${script}:\n${stdout}`);
  return line.slice(0, line.indexOf('node_modules/.bin/tsx')).trim();
}

/** What may stay resident of the burst once it is given back (glibc's malloc kept ~320 MB). */
const GIVEN_BACK_MB = 60;

// 300 MB in 64 KB blocks, each beside a 2 KB block that stays (as a server's long-lived objects sit
// between its buffers): the large ones freed, then the process's resident memory once it is back
// within GIVEN_BACK_MB (argv[2]) of where it started, or 3 s later (looked at every 100 ms)
const BURST = `
const fs = require('node:fs');
const rssMb = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
const givenBackMb = Number(process.argv[2]);
const before = rssMb();
let burst = [];
const kept = [];
for (let i = 0; i < 4800; i++) { burst.push(Buffer.alloc(65536, 1)); kept.push(Buffer.alloc(2048, 1)); }
const peak = rssMb();
burst = null;
global.gc();
const deadline = Date.now() + 3000;
const look = () => {
  const after = rssMb();
  if (after - before < givenBackMb || Date.now() >= deadline) console.log(JSON.stringify({ before, peak, after, kept: kept.length }));
  else setTimeout(look, 100);
};
setTimeout(look, 100);
`;

describe('the memory allocator', () => {
  it.skipIf(!jemalloc)('gives a freed burst of memory back within seconds, for what make starts (make run, make demo)', async () => {
    const probe = path.join(dir, 'burst.cjs');
    fs.writeFileSync(probe, BURST);
    // what make run and make demo really put before the service (read from their recipes)
    const allocator = await makeValue('$(ALLOCATOR)');
    const prefixes = { run: await recipePrefix('run', 'bin/serve.ts'), demo: await recipePrefix('demo', 'bin/demo.ts') };
    expect(prefixes.run).toContain(allocator);
    expect(prefixes.demo).toContain(allocator);
    const { stdout } = await run('sh', ['-c', `${prefixes.demo} ${process.execPath} --expose-gc ${probe} ${GIVEN_BACK_MB}`], { cwd: root });
    const { before, peak, after } = JSON.parse(stdout) as { before: number; peak: number; after: number };
    expect(peak - before).toBeGreaterThan(250); // the burst was resident
    expect(after - before).toBeLessThan(GIVEN_BACK_MB); // glibc's malloc: still ~320 MB above
  });

  it('is the same in the Docker image as for make', async () => {
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const env = /^ENV LD_PRELOAD=(\S+) MALLOC_CONF=(\S+)$/m.exec(dockerfile);
    expect(env, 'the Dockerfile preloads jemalloc with MALLOC_CONF').not.toBeNull();
    expect(env![1]).toMatch(/libjemalloc\.so\.2$/);
    expect(dockerfile).toContain('libjemalloc2');
    expect(env![2]).toBe(await makeValue('$(JEMALLOC_CONF)'));
  });
});
