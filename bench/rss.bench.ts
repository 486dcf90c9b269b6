// Resident memory of `make demo` at rest: the embedded database, the simulated market, the pipeline
// and the API in one process (bin/demo.ts), started as make demo starts it but in a data directory
// of its own, then left alone for REST_SECONDS while its venue loops collect as usual. Limit
// (issue 9): 300 MB at rest. The API-only process (ROLE=api) is measured by api.bench.ts on a server.
//
// The process is `node --import tsx bin/demo.ts`: tsx's own launcher (`tsx file`, a parent process
// of ~40 MB that only forwards signals) is not counted.
//
// The demo is started with the allocator make demo gives it (the Makefile's ALLOCATOR, read from make).
//
// Run: node_modules/.bin/tsx bench/rss.bench.ts   (or `make bench`)
//   REST_SECONDS=60   how long to wait after the demo is ready (default 150: V8's memory reducer
//                     first runs 35-100 s after ready, and a figure taken before it is not at rest)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { allocatorEnv, allocatorOf, check, fmt, header, limitRow, procMemoryMb, round, runBench, table } from './support.js';

const REST_SECONDS = Number(process.env.REST_SECONDS ?? 150);
const SAMPLE_MS = 5_000;
const LIMIT_MB = 300;
const READY_TIMEOUT_MS = 300_000;
check(Number.isFinite(REST_SECONDS) && REST_SECONDS > 0, `REST_SECONDS must be a positive number, not ${process.env.REST_SECONDS}`);


async function main(): Promise<void> {
  header('rss: make demo (database, simulated market, pipeline, API in one process) at rest', [
    `started with node --import tsx bin/demo.ts in a fresh data directory; ${REST_SECONDS} s at rest after 'demo ready', sampled every ${SAMPLE_MS / 1000} s`,
    `limit: ${LIMIT_MB} MB at rest`,
    `allocator: make demo's (the Makefile's ALLOCATOR: jemalloc where the system has it, else glibc's malloc with fixed thresholds)`,
  ]);
  const root = path.resolve(import.meta.dirname, '..');
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-rss-'));
  const t0 = performance.now();
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/demo.ts'], {
    cwd: root,
    env: { ...process.env, ...allocatorEnv(), MARKET: 'simulated', AFRATES_VAR_DIR: varDir, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the demo was not ready within ${READY_TIMEOUT_MS / 1000} s`)), READY_TIMEOUT_MS);
      proc.stdout.on('data', (c: Buffer) => {
        out = (out + c.toString()).slice(-10_000);
        if (out.includes('"demo ready')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.on('exit', (code) => reject(new Error(`the demo exited with ${code} before it was ready`)));
    });
    const readyS = (performance.now() - t0) / 1000;
    const samples: Array<[number, number]> = [[0, procMemoryMb(proc.pid!)]];
    for (let s = SAMPLE_MS; s <= REST_SECONDS * 1000; s += SAMPLE_MS) {
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
      samples.push([s / 1000, procMemoryMb(proc.pid!)]);
    }
    const atRest = samples[samples.length - 1]![1];
    const peak = procMemoryMb(proc.pid!, 'VmHWM');
    const allocator = allocatorOf(proc.pid!);
    console.log(`  ready after ${fmt(readyS)} s (24 h of simulated history backfilled); the demo's process allocates with ${allocator}`);
    console.log(table([['s after ready', 'rss MB'], ...samples.map(([s, mb]) => [s, round(mb, 0)])]));
    console.log('');
    console.log(table([['figure', 'value', 'limit', 'ratio'], limitRow(`RSS of make demo ${REST_SECONDS} s after ready, MB`, round(atRest, 0), LIMIT_MB), ['  peak (VmHWM) since start, MB', round(peak, 0), '-', '-']]));
    console.log('');
    console.log(JSON.stringify({ rss: { rest_seconds: REST_SECONDS, ready_s: round(readyS, 1), ready_mb: round(samples[0]![1], 1), rest_mb: round(atRest, 1), peak_mb: round(peak, 1), limit_mb: LIMIT_MB, allocator } }));
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once('exit', r)));
    fs.rmSync(varDir, { recursive: true, force: true });
  }
}

runBench(main);
