// The operator's view: `make run`'s process starts on the embedded database, answers health,
// takes key commands through its loopback admin endpoint while running (the embedded database
// admits one connection), stops cleanly on SIGTERM, and the key commands then work directly.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// node with tsx's loader, not the tsx launcher: one process, so signals reach the service itself
const node = (script: string, ...args: string[]) => [process.execPath, ['--import', 'tsx', script, ...args]] as const;
const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-service-'));
const env = { ...process.env, AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', CYCLE_SECONDS: '300' };
delete (env as Record<string, string | undefined>).DATABASE_URL;
delete (env as Record<string, string | undefined>).REDIS_URL;

let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill('SIGKILL');
  fs.rmSync(varDir, { recursive: true, force: true });
});

/** A key command, run without blocking this process (its HTTP keep-alive sockets stay served). */
async function keyCommand(...args: string[]) {
  return keyCommandIn(env, ...args);
}

async function keyCommandIn(commandEnv: NodeJS.ProcessEnv, ...args: string[]) {
  const [cmd, argv] = node('bin/key.ts', ...args);
  try {
    const r = await promisify(execFile)(cmd, argv, { cwd: root, env: commandEnv, encoding: 'utf8', timeout: 60_000 });
    return { status: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `make -s <target> VAR=value ...`, as an operator types it. */
async function makeCommand(target: string, ...vars: string[]) {
  try {
    const r = await promisify(execFile)('make', ['-s', target, ...vars], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
    return { status: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

async function waitForUrl(proc: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`no 'API listening' line in: ${buffer.slice(-2000)}`)), 60_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (const line of buffer.split('\n')) {
        if (line.includes('"API listening"')) {
          clearTimeout(timer);
          resolve(JSON.parse(line).url as string);
        }
      }
    });
    proc.on('exit', (code) => reject(new Error(`exited with ${code}: ${buffer.slice(-2000)}`)));
  });
}

describe('an API-only process (ROLE=api)', () => {
  it('serves without ever loading the collector (ccxt and the venues)', async () => {
    const apiVar = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-api-only-'));
    const proc = spawn(process.execPath, ['--import', 'tsx', '--import', './test/support/forbid-ccxt.mjs', 'bin/serve.ts'], {
      cwd: root,
      env: { ...env, ROLE: 'api', AFRATES_VAR_DIR: apiVar },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await waitForUrl(proc);
      expect((await fetch(`${url}/v1/health`)).status).toBe(200);
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      proc.kill('SIGKILL');
      fs.rmSync(apiVar, { recursive: true, force: true });
    }
  });
});

describe('a pipeline-only process (ROLE=pipeline)', () => {
  it('runs and stops cleanly without ever loading the API', async () => {
    const pipelineVar = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-pipeline-only-'));
    // a market that refuses every connection: the venues fail fast, nothing is fetched from outside
    const proc = spawn(process.execPath, ['--import', 'tsx', '--import', './test/support/forbid-api.mjs', 'bin/serve.ts'], {
      cwd: root,
      env: { ...env, ROLE: 'pipeline', MARKET: 'simulated', SIM_URL: 'http://127.0.0.1:9', AFRATES_VAR_DIR: pipelineVar },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no 'afrates running' line in: ${out.slice(-2000)}`)), 60_000);
        proc.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('"afrates running"')) {
            clearTimeout(timer);
            resolve();
          }
        });
        void exited.then((code) => reject(new Error(`exited with ${code}: ${out.slice(-2000)}`)));
      });
      expect(out).toContain('"role":"pipeline"');
      proc.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      proc.kill('SIGKILL');
      fs.rmSync(pipelineVar, { recursive: true, force: true });
    }
  });
});

describe('a key command with a mistake', () => {
  it('is answered before any database is looked for or opened', async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-keys-'));
    try {
      const r = await keyCommandIn({ ...env, AFRATES_VAR_DIR: empty }, 'create', '--tier', 'platinum');
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toMatch(/^error: TIER must be one of/);
      expect(fs.readdirSync(empty)).toEqual([]); // nothing created or locked
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('the service process', () => {
  it('runs, issues keys through the running process, and stops cleanly on Ctrl-C', async () => {
    const [cmd, argv] = node('bin/serve.ts');
    child = spawn(cmd, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await waitForUrl(child);
    const health = await (await fetch(`${url}/v1/health`)).json();
    expect(health).toMatchObject({ services: { database: 'ok', redis: 'disabled' }, mode: 'real' });

    const created = await keyCommand('create', '--tier', 'builder', '--name', 'Ops', '--email', 'ops@example.test');
    expect(created.status, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect(key).toMatch(/^afr_live_[0-9A-Za-z]{32}$/); // the key alone on stdout
    expect(created.stderr).toContain('builder');
    const pairs = await fetch(`${url}/v1/pairs`, { headers: { 'X-API-Key': key } });
    expect(pairs.status).toBe(200);
    const list = await keyCommand('list');
    expect(list.stdout).toContain('Ops');
    expect(list.stdout).not.toContain(key); // never shown again

    const rotated = await keyCommand('rotate', '--id', '1');
    expect(rotated.status, rotated.stderr).toBe(0);
    const replacement = rotated.stdout.trim();
    expect(replacement).not.toBe(key);
    expect((await fetch(`${url}/v1/pairs`, { headers: { 'X-API-Key': key } })).status).toBe(401); // same process: at once
    expect((await fetch(`${url}/v1/pairs`, { headers: { 'X-API-Key': replacement } })).status).toBe(200);

    // Ctrl-C under `make run` reaches the service twice (the terminal, and tsx passing it on): one stop
    const exited = new Promise<number | null>((resolve) => child!.on('exit', (code) => resolve(code)));
    child.kill('SIGINT');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(fs.readdirSync(varDir).sort()).toEqual(['db', 'keys']); // no admin.json, no db.lock left
    child = undefined;

    // with the service stopped, the same commands open the database themselves
    const revoke = await keyCommand('revoke', '--id', '2');
    expect(revoke.status, revoke.stderr).toBe(0);
    expect((await keyCommand('list')).stdout).toMatch(/2\t.*revoked \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/); // as through the service
    const bad = await keyCommand('create', '--tier', 'platinum');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('TIER must be one of');

    // operators' mistakes: one clear line each, never a stack trace or a database error
    expect((await keyCommand('create', '--tier', 'free', '--email', 'dup@example.test')).status).toBe(0);
    const mistakes = [
      [await keyCommand('create', '--tier', 'free', '--email', 'dup@example.test'), /dup@example\.test already has an active free key \(id \d+\)/],
      [await keyCommand('create', '--tier', 'builder', '--email', 'not-an-email'), /EMAIL is not an email address/],
      [await keyCommand('revoke'), /ID is required/],
      [await keyCommand('rotate', '--id', '999'), /no active key with id 999/],
      [await keyCommand('create', '--tier', 'builder', '--name', 'x'.repeat(201)), /NAME must be at most 200 characters/],
    ] as const;
    for (const [r, message] of mistakes) {
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect((await keyCommand('list')).stdout.split('\n')[0]).toBe('id\tprefix\ttier\tcustomer\temail\tstate');
    // through make, values that start with '-' are values (parseArgs died with a stack trace); make adds its own line
    for (const [r, message] of [
      [await makeCommand('revoke', 'ID=-3'), /^error: ID is required/],
      [await makeCommand('key', 'TIER=builder', 'NAME=-Acme', 'EMAIL=-not-an-email'), /^error: EMAIL is not an email address/],
    ] as const) {
      expect(r.status).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    // a name is stored as typed: quotes and backticks are not the shell's (a `$` is make's: `$$`)
    const name = 'O"Brien `echo PWNED` \'Ltd\'';
    const quoted = await makeCommand('key', 'TIER=builder', `NAME=${name}`, 'EMAIL=obrien@example.test');
    expect(quoted.status, quoted.stderr).toBe(0);
    expect((await keyCommand('list')).stdout).toContain(`\t${name}\tobrien@example.test\t`);

    // while make demo runs (its admin file in var/demo), a key command without DEMO=1 says whose keys it touched
    fs.mkdirSync(path.join(varDir, 'demo'), { recursive: true });
    fs.writeFileSync(path.join(varDir, 'demo', 'admin.json'), JSON.stringify({ url: 'http://127.0.0.1:9', token: 'x' }));
    const beside = await keyCommand('list');
    expect(beside.status).toBe(0);
    expect(beside.stderr).toContain('add DEMO=1');
    expect(beside.stdout).toMatch(/2\t.*revoked/);
    fs.rmSync(path.join(varDir, 'demo'), { recursive: true });
    // fourteen processes started one after another, most opening the database: ~60 s on two
    // busy cores, more than the suite's default allows
  }, 240_000);
});
