// The production build (what the Dockerfile runs): the service compiled to JavaScript needs only
// production dependencies, and it starts, answers (the API and the web pages) and stops cleanly
// with plain node (no tsx).
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
// inside the checkout, so that node finds node_modules as it does in the image's /app
fs.mkdirSync(path.join(root, 'var'), { recursive: true });
const out = fs.mkdtempSync(path.join(root, 'var', 'dist-'));
const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-dist-var-'));
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };

beforeAll(async () => {
  await promisify(execFile)(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json', '--outDir', out], { cwd: root });
  fs.cpSync(path.join(root, 'sql'), path.join(out, 'sql'), { recursive: true });
  // as `npm run build` does after its Vite build (make test has built web/dist already)
  fs.cpSync(path.join(root, 'web', 'dist'), path.join(out, 'web', 'dist'), { recursive: true });
}, 120_000);
afterAll(() => {
  fs.rmSync(out, { recursive: true, force: true });
  fs.rmSync(varDir, { recursive: true, force: true });
});

/** Every package a compiled file of the server imports (bare specifiers, by package name). */
function importedPackages(dir: string): Set<string> {
  const names = new Set<string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.m?js$/.test(entry.name)) continue;
    if (path.relative(dir, entry.parentPath).split(path.sep)[0] === 'web') continue; // the browser's bundles
    const text = fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
    for (const m of text.matchAll(/(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) continue;
      names.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  }
  return names;
}

describe('the production build', () => {
  it('imports production dependencies only', () => {
    const missing = [...importedPackages(out)].filter((name) => !(name in pkg.dependencies));
    expect(missing).toEqual([]);
  });

  it('starts with plain node, answers, and stops cleanly on SIGTERM', async () => {
    const env: Record<string, string | undefined> = { ...process.env, AFRATES_VAR_DIR: varDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production' };
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const child = spawn(process.execPath, [path.join(out, 'bin/serve.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      let buffer = '';
      child.stdout.on('data', (chunk: Buffer) => {
        buffer += chunk.toString();
        const line = buffer.split('\n').find((l) => l.includes('"API listening"'));
        if (line) resolve(JSON.parse(line).url as string);
      });
      child.on('exit', (code) => reject(new Error(`exited with ${code}: ${buffer.slice(-1000)} ${errors.slice(-1000)}`)));
    });
    const health = await (await fetch(`${url}/v1/health`)).json();
    expect(health).toMatchObject({ services: { database: 'ok' }, version: pkg.version });
    // the web pages come from the compiled tree too
    const home = await fetch(`${url}/`);
    expect([home.status, home.headers.get('content-type')]).toEqual([200, expect.stringContaining('text/html')]);
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 60_000);
});
