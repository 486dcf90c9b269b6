// The suite's hosts: programs started in their network namespaces (ip netns exec), each process
// supervised as a service manager would (started again 2 s after it exits, unless held down).
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const PREFIX = process.env.FAULTS_PREFIX ?? 'afx';
export const WORK = process.env.FAULTS_WORK ?? '/tmp/afrates-faults';
export const PG_BIN = process.env.FAULTS_PG_BIN ?? '';
export const ROOT = path.resolve(import.meta.dirname, '..');

export const ns = (host: string): string => `${PREFIX}-${host}`;
export const ADDRESS: Record<string, string> = {
  ctl: '10.77.0.2',
  pg1: '10.77.0.10',
  pg2: '10.77.0.11',
  redis: '10.77.0.12',
  sim: '10.77.1.13',
  p1: '10.77.0.21',
  p2: '10.77.0.22',
  a1: '10.77.0.31',
  a2: '10.77.0.32',
};

/** A command in a host's namespace; resolves with stdout, rejects with its stderr. */
export async function inHost(host: string, file: string, args: string[], opts: { timeoutMs?: number; asPostgres?: boolean; env?: Record<string, string> } = {}): Promise<string> {
  const cmd = opts.asPostgres ? ['runuser', '-u', 'postgres', '--', file, ...args] : [file, ...args];
  const { stdout } = await run('ip', ['netns', 'exec', ns(host), ...cmd], { timeout: opts.timeoutMs ?? 120_000, cwd: ROOT, maxBuffer: 64 << 20, ...(opts.env ? { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...opts.env } } : {}) });
  return stdout;
}

/** ip/tc commands on the switch (the far end of every host's links). */
export async function onSwitch(file: 'ip' | 'tc', args: string[]): Promise<void> {
  await run(file, ['-n', ns('sw'), ...args], { timeout: 10_000 });
}
export async function onHost(host: string, file: 'ip' | 'tc', args: string[]): Promise<void> {
  await run(file, ['-n', ns(host), ...args], { timeout: 10_000 });
}

export class Service {
  proc: ChildProcess | undefined;
  held = false;
  stopped = false;
  starts = 0;
  private readonly logFile: string;
  private exitWaiters: Array<() => void> = [];

  constructor(
    readonly name: string,
    readonly host: string,
    readonly argv: string[],
    readonly env: Record<string, string>,
  ) {
    this.logFile = path.join(WORK, `${name}.log`);
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  log(): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8');
    } catch {
      return '';
    }
  }

  start(): void {
    if (this.stopped || this.running) return;
    this.starts++;
    const out = fs.openSync(this.logFile, 'a');
    fs.writeSync(out, `\n=== start ${this.starts} at ${new Date().toISOString()}\n`);
    const proc = spawn('ip', ['netns', 'exec', ns(this.host), ...this.argv], { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...this.env }, stdio: ['ignore', out, out] });
    fs.closeSync(out);
    this.proc = proc;
    proc.once('exit', () => {
      for (const w of this.exitWaiters.splice(0)) w();
      // a supervisor: started again after 2 s, at most 200 times
      if (!this.held && !this.stopped && this.starts < 200) setTimeout(() => this.proc === proc && !this.held && this.start(), 2_000).unref();
    });
  }

  exited(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  signal(sig: NodeJS.Signals): void {
    if (this.running) this.proc!.kill(sig);
  }

  /** Stops it for good (SIGCONT first, in case it is frozen); SIGKILL after 12 s. */
  async stop(sig: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.stopped = true;
    if (!this.running) return;
    this.proc!.kill('SIGCONT');
    this.proc!.kill(sig);
    const t = setTimeout(() => this.proc?.kill('SIGKILL'), 12_000);
    await this.exited();
    clearTimeout(t);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Asks `probe` every 500 ms until it answers something other than undefined (within `ms`). */
export async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await probe().catch(() => undefined);
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`waited ${ms / 1000} s for ${what}`);
    await sleep(500);
  }
}
