// TimescaleDB's bundle for the embedded database, without the update scripts PGlite would keep in memory.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { slimTimescaledbBundle, withoutUpdateScripts } from '../../../../lib/db/embedded/bundle.mjs';

const bundled = new URL('timescaledb.tar.gz', pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')));

/** One ustar header block: name, size (octal) and type, checksum left blank (the reader ignores it). */
function header(name: string, size: number, type = '0'): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 'latin1');
  h.write(size.toString(8).padStart(11, '0'), 124, 'latin1');
  h.write(type, 156, 'latin1');
  h.write('ustar', 257, 'latin1');
  return h;
}

const entry = (name: string, body: string, type = '0') => Buffer.concat([header(name, body.length, type), Buffer.from(body.padEnd(Math.ceil(body.length / 512) * 512, '\0'))]);

describe('TimescaleDB bundle for the embedded database', () => {
  it("keeps PGlite's bundle whole but for the scripts that update older versions", () => {
    const { tar, kept, dropped } = withoutUpdateScripts(gunzipSync(fs.readFileSync(bundled)));
    expect(dropped.length).toBeGreaterThan(10);
    expect(dropped.every((f) => /timescaledb--[^/]+--[^/]+\.sql$/.test(f))).toBe(true);
    // what CREATE EXTENSION reads: the control file, the install script, the libraries
    expect(kept).toContain('share/postgresql/extension/timescaledb.control');
    expect(kept.filter((f) => /\/timescaledb--[^-/]+(-dev)?\.sql$/.test(f))).toHaveLength(1);
    expect(kept.filter((f) => f.endsWith('.so')).length).toBeGreaterThanOrEqual(2);
    expect(tar.length).toBeLessThan(2_000_000); // 15 MB with them
  });

  it('copies what it keeps byte for byte, and refuses entries it does not understand', () => {
    const keep = entry('share/postgresql/extension/timescaledb.control', 'default_version = 9\n');
    const tar = Buffer.concat([keep, entry('share/postgresql/extension/timescaledb--1--9.sql', 'x'.repeat(700)), Buffer.alloc(1024)]);
    expect(withoutUpdateScripts(tar).tar).toEqual(Buffer.concat([keep, Buffer.alloc(1024)]));
    const pax = Buffer.concat([entry('PaxHeader/long', '30 path=a/very/long/name.sql\n', 'x'), keep, Buffer.alloc(1024)]);
    expect(() => withoutUpdateScripts(pax)).toThrow(/type 'x'/);
    expect(() => withoutUpdateScripts(keep)).toThrow(/ends inside a tar header/);
  });

  it('is written whole when several databases start at once on a fresh machine', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-bundle-'));
    try {
      // each thread as a database worker does it, all at the same moment, and reads the file at
      // once, as PGlite does (a half-written one would not unzip)
      const code = `const { parentPort, workerData } = require('node:worker_threads');
        const { readFileSync } = require('node:fs');
        const { gunzipSync } = require('node:zlib');
        import(workerData.module).then((m) => {
          const url = m.slimTimescaledbBundle(new URL(workerData.source), workerData.dir);
          gunzipSync(readFileSync(url));
          parentPort.postMessage(url.href);
        });`;
      const module = pathToFileURL(path.resolve('lib/db/embedded/bundle.mjs')).href;
      const urls = await Promise.all(
        Array.from({ length: 6 }, () => {
          const worker = new Worker(code, { eval: true, workerData: { module, source: bundled.href, dir } });
          return new Promise<string>((resolve, reject) => worker.once('message', resolve).once('error', reject)).finally(() => worker.terminate());
        }),
      );
      expect(new Set(urls).size).toBe(1);
      expect(fs.readdirSync(dir)).toEqual([path.basename(new URL(urls[0]!).pathname)]); // no half-written file left
      const { kept, dropped } = withoutUpdateScripts(gunzipSync(fs.readFileSync(new URL(urls[0]!))));
      expect(dropped).toEqual([]);
      expect(kept).toContain('share/postgresql/extension/timescaledb.control');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('writes the slim bundle once, where PGlite reads it', () => {
    const first = slimTimescaledbBundle(bundled);
    const written = fs.statSync(first).mtimeMs;
    expect(slimTimescaledbBundle(bundled).href).toBe(first.href);
    expect(fs.statSync(first).mtimeMs).toBe(written);
    expect(withoutUpdateScripts(gunzipSync(fs.readFileSync(first))).dropped).toEqual([]);
  });
});
