// A Redis server of a test's own, to stop, pause or kill (the machine's shared one on 6379 stays up).
import { once } from 'node:events';
import { spawn, type ChildProcess } from 'node:child_process';
import { portOpen, until } from './wait.js';

/** redis-server on 127.0.0.1:`port`, without persistence (killed and started again, it is empty); resolves once it listens. */
export async function startRedisServer(port: number): Promise<ChildProcess> {
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await until(`redis-server listening on port ${port}`, () => portOpen(port), 5_000);
  return proc;
}

/** Kills a server of startRedisServer's and resolves once it has exited: its port is free and its clients' connections closed. */
export async function killRedisServer(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = once(proc, 'exit');
  proc.kill('SIGKILL');
  await exited;
}
