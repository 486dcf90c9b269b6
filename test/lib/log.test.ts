// The service's log lines (lib/log.ts), as an operator reading its stdout sees them: written
// asynchronously, yet none lost when the process ends, however it ends short of a kill; a reader
// that stalls stalls neither the service nor its memory, and what could not wait is counted.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_BYTES } from '../../lib/log.js';

const root = path.resolve(import.meta.dirname, '../..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-log-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// A process that logs `lines` lines of ~200 bytes (a pause every 100, as a server's lines come
// between its work), then ends as `end` says; every second, on stderr, how many it has logged.
// With `loggers` > 1 it takes turns between that many loggers (a process has its service's, and
// lib/db/connect.ts makes one of its own before the service hands it one).
const CHILD = `
import crypto from 'node:crypto';
import { createLogger } from ${JSON.stringify(pathToFileURL(path.join(root, 'lib/log.ts')).href)};
const [lines, end, loggers] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4] ?? 1)];
const logs = Array.from({ length: loggers }, () => createLogger('info'));
const log = { info: (...args) => logs[logged % loggers].info(...args) };
const ticker = setInterval(() => process.stderr.write('logged ' + logged + '\\n'), 1000);
let logged = 0;
// the thread pool busy all along (key hashing, DNS, file reads), as a server's may be when it exits
if (end === 'exit-busy') for (let i = 0; i < 4; i++) crypto.pbkdf2('p', 's', 3_000_000, 32, 'sha256', () => {});
for (; logged < lines; logged++) {
  log.info({ n: logged, path: '/v1/rates/live', requestId: 'req_' + 'x'.repeat(100) }, 'line');
  if (logged % 100 === 0) await new Promise((r) => setImmediate(r));
}
process.stderr.write('done ' + logged + '\\n');
clearInterval(ticker);
if (end === 'exit') process.exit(3);
if (end === 'exit-busy') process.exit(3);
if (end === 'throw') throw new Error('crashed on purpose');
`;
const childFile = path.join(dir, 'child.mts');
fs.writeFileSync(childFile, CHILD);

// A command's output: its result on stdout with printLine, its warnings on stdout or stderr.
const COMMAND = `
import { createLogger, printLine } from ${JSON.stringify(pathToFileURL(path.join(root, 'lib/log.ts')).href)};
const toStdout = createLogger('warn');
const toStderr = createLogger('warn', {}, 2);
for (let i = 0; i < 2000; i++) {
  printLine('progress ' + i);
  toStdout.warn({ n: i }, 'beside');
  toStderr.warn({ n: i }, 'aside');
  if (i % 100 === 0) await new Promise((r) => setTimeout(r, 1));
}
process.exit(0);
`;
const commandFile = path.join(dir, 'command.mts');
fs.writeFileSync(commandFile, COMMAND);

interface Run {
  code: number | null;
  lines: { msg: string; n?: number; dropped?: number; time: string }[];
  stderr: string;
}

/**
 * Runs the child. With `stalled`, its stdout is not read until it says on stderr that it has
 * logged everything, or until `stalled` ms have passed (a child that blocked never says so).
 */
function runChild(lines: number, end: 'return' | 'exit' | 'exit-busy' | 'throw', stalled?: number, loggers = 1, hangUp = false): Promise<Run & { doneUnread: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', childFile, String(lines), end, String(loggers)], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  let stderr = '';
  let reading = false;
  let doneUnread = false;
  const read = () => {
    if (reading) return;
    reading = true;
    child.stdout.on('data', (c: Buffer) => {
      if (hangUp) child.stdout.destroy(); // the reader goes away after its first read
      else chunks.push(c);
    });
  };
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (stderr.includes('done') && !reading) {
      doneUnread = true;
      read();
    }
  });
  if (stalled) setTimeout(read, stalled).unref();
  else read();
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const text = Buffer.concat(chunks).toString();
      resolve({ code, stderr, doneUnread, lines: text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) });
    });
  });
}

describe('the service log', () => {
  it.each(['return', 'exit', 'exit-busy', 'throw'] as const)('holds every line logged before the process ends (it ends by %s)', async (end) => {
    const run = await runChild(20_000, end);
    expect(run.code).toBe({ return: 0, exit: 3, 'exit-busy': 3, throw: 1 }[end]);
    const numbered = run.lines.filter((l) => l.msg === 'line');
    expect(numbered.map((l) => l.n)).toEqual(Array.from({ length: 20_000 }, (_, i) => i)); // all, once each, in order
    expect(numbered.every((l) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(l.time))).toBe(true);
    if (end === 'throw') expect(run.stderr).toContain('crashed on purpose');
  });

  it('keeps the lines of several loggers in one process whole and in the order they were logged, its reader slow', async () => {
    // two loggers, 50,000 lines (~12 MB: within what may wait), stdout unread for a second: with an
    // output each, each wrote its own backlog and their lines came out of order
    const run = await runChild(50_000, 'return', 1_000, 2);
    expect(run.code).toBe(0);
    expect(run.lines.filter((l) => l.msg === 'line').map((l) => l.n)).toEqual(Array.from({ length: 50_000 }, (_, i) => i));
  });

  it('goes on, and ends as it would, when its reader goes away', async () => {
    const run = await runChild(20_000, 'return', undefined, 1, true);
    expect(run.stderr).toContain('done 20000'); // every line was logged, none blocked or threw
    expect(run.code).toBe(0);
  });

  it('keeps a command\'s printed lines in order with its log lines, and its stderr logger off stdout', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', commandFile], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    expect(await new Promise((r) => child.on('close', r))).toBe(0);
    const expected = Array.from({ length: 2000 }, (_, i) => [`progress ${i}`, `beside ${i}`]).flat();
    const stdout = Buffer.concat(out).toString().trim().split('\n');
    expect(stdout.map((l) => (l.startsWith('{') ? `${JSON.parse(l).msg} ${JSON.parse(l).n}` : l))).toEqual(expected);
    const stderr = Buffer.concat(err).toString().trim().split('\n').map((l) => JSON.parse(l));
    expect(stderr.map((l) => `${l.msg} ${l.n}`)).toEqual(Array.from({ length: 2000 }, (_, i) => `aside ${i}`));
  });

  it('ends, once its work is done, within seconds of a reader that never reads', async () => {
    // lines waiting for a full pipe used to hold the process open for as long as nobody read
    const child = spawn(process.execPath, ['--import', 'tsx', childFile, '20000', 'return'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const started = Date.now();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toContain('done 20000');
    expect(code).toBe(0);
    expect(Date.now() - started).toBeLessThan(20_000); // its work, then at most 5 s of patience at exit
  }, 30_000);

  it('goes on while its reader stalls, holds at most MAX_PENDING_BYTES, and reports what it dropped', async () => {
    // ~60 MB of lines into a pipe nobody reads: the process must neither block on it (a pipe holds
    // 64 KB) nor keep them all
    const lines = 250_000;
    const run = await runChild(lines, 'return', 30_000);
    expect(run.code).toBe(0);
    expect(run.doneUnread).toBe(true); // it logged everything while nobody read
    const received = run.lines.filter((l) => l.msg === 'line').length;
    const warnings = run.lines.filter((l) => l.msg.startsWith('log lines dropped'));
    expect(warnings).toHaveLength(1); // once, after what waited: nothing else was logged meanwhile
    const dropped = warnings[0]!.dropped!;
    expect(received).toBeLessThan(lines); // not all of it waited
    expect(received * 200).toBeLessThan(MAX_PENDING_BYTES * 1.5); // what waited was bounded
    expect(received + dropped).toBe(lines); // and every line is either there or counted
  });
});
