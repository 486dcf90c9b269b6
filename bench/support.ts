// Helpers shared by the benchmarks (not a benchmark itself: `make bench` runs bench/*.bench.ts only).
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// A benchmark runs on BENCH_DATABASE_URL's TimescaleDB server (the test support creates and drops
// a database of its own there) or on the embedded database: never on a TEST_DATABASE_URL left in
// the shell by a test run, which would print a server's figures under the embedded database's name.
if (process.env.BENCH_DATABASE_URL) process.env.TEST_DATABASE_URL = process.env.BENCH_DATABASE_URL;
else {
  delete process.env.TEST_DATABASE_URL;
  delete process.env.TEST_DATABASE_READ_URL;
}

/** Plain-text table: the first row is the header; columns are padded, numbers right-aligned. */
export function table(rows: readonly (readonly (string | number)[])[]): string {
  const cells = rows.map((r) => r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  const widths: number[] = [];
  for (const r of cells) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)));
  const numeric = (i: number) => rows.slice(1).every((r) => typeof r[i] === 'number' || r[i] === '-' || /^[\d.,]+( \w+)?$/.test(String(r[i])));
  const line = (r: string[]) => r.map((c, i) => (i > 0 && numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of cells.slice(1)) out.push(line(r));
  return out.join('\n');
}

/** A number for a table: thousands separated, 1 decimal below 100, none above. */
export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return n.toLocaleString('en-US');
  const digits = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2;
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Rounds for the JSON line (3 significant decimals is plenty for comparisons). */
export function round(n: number, decimals = 2): number {
  const f = 10 ** decimals;
  return Math.round(n * f) / f;
}

/** Nearest-rank percentile of a list of numbers (p in 0..100). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

export function machine(): { cpus: number; cpu: string; node: string; platform: string; memGb: number } {
  return {
    cpus: os.availableParallelism?.() ?? os.cpus().length,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    memGb: Math.round(os.totalmem() / 2 ** 30),
  };
}

export function header(title: string, lines: string[]): void {
  const m = machine();
  console.log(`# ${title}`);
  console.log(`# ${new Date().toISOString()}  node ${m.node}  ${m.platform}  ${m.cpus} cores (${m.cpu})  ${m.memGb} GB`);
  for (const l of lines) console.log(`# ${l}`);
  console.log('');
}

/** Milliseconds since `t0` (performance.now()). */
export const since = (t0: number) => performance.now() - t0;

/** Fails the benchmark (exit 1) on a broken invariant, after printing why. */
export function check(ok: boolean, message: string): asserts ok {
  if (!ok) {
    console.error(`benchmark check failed: ${message}`);
    throw new Error(message);
  }
}

/**
 * A table row for a figure with a limit: the value, the limit, and value / limit with its verdict
 * (a limit is a most, unless `atLeast`: then the figure must reach it).
 */
export function limitRow(label: string, value: number, limit: number, atLeast = false): [string, number, number, string] {
  const ratio = value / limit;
  const ok = atLeast ? ratio >= 1 : ratio <= 1;
  return [label, value, limit, `${ratio.toFixed(2)}x ${ok ? 'ok' : 'MISSED'}`];
}

/** Runs a benchmark's main: exit 0 when it ends, 1 with the error when it fails (a check included). */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** A process's resident memory now (VmRSS) or at its peak (VmHWM), in MB, from /proc (Linux). */
export function procMemoryMb(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

/**
 * The environment make gives what it starts (make run, make demo): the Makefile's `ALLOCATOR`
 * (jemalloc where the system has it) and its exported malloc settings, read from make itself so
 * that a benchmark's child process runs as make runs the service, whoever started the benchmark.
 * Not for Chromium, whose sandboxed GPU process dies with jemalloc's background thread.
 */
export function allocatorEnv(): Record<string, string> {
  const root = path.resolve(import.meta.dirname, '..');
  const printed = execFileSync('make', ['-s', '--no-print-directory', '--eval', "print-allocator: ; @echo $(ALLOCATOR) MALLOC_MMAP_THRESHOLD_=$$MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_=$$MALLOC_TRIM_THRESHOLD_", 'print-allocator'], { cwd: root }).toString();
  return Object.fromEntries(printed.trim().split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

/** Which allocator a running process allocates with, from what it has mapped. */
export function allocatorOf(pid: number): 'jemalloc' | 'glibc' {
  return fs.readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc') ? 'jemalloc' : 'glibc';
}

/**
 * `file` (a benchmark) run again as a child process in `role` (`--child=<role>`, read by childRole):
 * work kept off the measured process's event loop, as another machine's would be.
 */
export function forkChild(file: string, role: string, args: string[] = []): ChildProcess {
  return fork(file, [`--child=${role}`, ...args], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

/** The role this process was forked in (forkChild), or undefined in the benchmark's own process. */
export const childRole = (): string | undefined => process.argv.find((a) => a.startsWith('--child='))?.slice(8);

/** Sends `message` to `child` and resolves with its first message of type `reply`. */
export function ask<T>(child: ChildProcess, message: unknown, reply: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`child ${reply} exited with ${code}`));
    const on = (m: { type: string } & Record<string, unknown>) => {
      if (m.type !== reply) return;
      child.off('message', on);
      child.off('exit', exited);
      resolve(m as T);
    };
    child.on('message', on);
    child.once('exit', exited);
    child.send(message as object);
  });
}
