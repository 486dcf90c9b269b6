// A real process of the service (bin/serve.ts, bin/migrate.ts) on a server database, as an
// orchestrator starts it: node with tsx's loader (so signals reach it), its own var/, a free port,
// no Redis and no replicas unless asked, a simulated market nobody answers at.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

export interface ServiceRun {
  readonly proc: ChildProcess;
  /** Resolves with the exit code, or with 'running' once the service logs that it runs. */
  readonly outcome: Promise<number | 'running'>;
  /** Resolves with the exit code when it exits. */
  readonly exited: Promise<number>;
  /** Its stdout and stderr so far. */
  readonly output: () => string;
}

/** Started processes, and their var/ directories, for `endServiceRuns` after the tests. */
const started: ChildProcess[] = [];
const varDirs: string[] = [];

export function runService(script: string, url: string, extra: Record<string, string> = {}): ServiceRun {
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-process-'));
  varDirs.push(varDir);
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: url, AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MARKET: 'simulated', SIM_URL: 'http://127.0.0.1:9', CYCLE_SECONDS: '300', ...extra };
  if (!('REDIS_URL' in extra)) delete env.REDIS_URL;
  if (!('DATABASE_READ_URL' in extra)) delete env.DATABASE_READ_URL;
  const proc = spawn(process.execPath, ['--import', 'tsx', script], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let out = '';
  const exited = new Promise<number>((resolve) => proc.once('exit', (code) => resolve(code ?? -1)));
  const outcome = new Promise<number | 'running'>((resolve) => {
    const hear = (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('"afrates running"')) resolve('running');
    };
    proc.stdout!.on('data', hear);
    proc.stderr!.on('data', hear);
    void exited.then(resolve);
  });
  return { proc, outcome, exited, output: () => out };
}

/** Every process started here killed, and their var/ directories removed. */
export function endServiceRuns(): void {
  for (const p of started) p.kill('SIGKILL');
  for (const d of varDirs) fs.rmSync(d, { recursive: true, force: true });
}
