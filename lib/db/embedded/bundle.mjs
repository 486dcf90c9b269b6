// TimescaleDB's bundle for PGlite without its update scripts. PGlite unpacks an extension's whole
// bundle into its in-memory file system, where it stays for the life of the process: for
// TimescaleDB that is 15 MB, of which 14 MB are the scripts that update an installed TimescaleDB
// from each of 44 older versions to the bundled one. The embedded database only ever installs the
// bundled version (CREATE EXTENSION in lib/db/embedded/worker.mjs; nothing here runs ALTER
// EXTENSION ... UPDATE), so those scripts would be memory held for nothing (docs/embedded-database.md).
// Plain JavaScript: it runs in the database's worker thread, which has no tsx loader.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const BLOCK = 512;
/** timescaledb--<from>--<to>.sql: an update script (the install script has one version). */
const UPDATE_SCRIPT = /(^|\/)timescaledb--[^/]+--[^/]+\.sql$/;

/**
 * A tar archive without the update scripts, every other entry byte for byte. Only the plain
 * ustar entries PGlite's bundles hold are understood: anything else (long names, pax headers) is
 * refused rather than guessed at.
 * @param {Buffer} tar
 * @returns {{ tar: Buffer, kept: string[], dropped: string[] }}
 */
export function withoutUpdateScripts(tar) {
  /** @type {Buffer[]} */
  const parts = [];
  const kept = [];
  const dropped = [];
  let at = 0;
  for (;;) {
    if (at + BLOCK > tar.length) throw new Error('the extension bundle ends inside a tar header');
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    const name = header.subarray(0, 100).toString('latin1').replace(/\0.*$/s, '');
    const prefix = header.subarray(345, 500).toString('latin1').replace(/\0.*$/s, '');
    const type = String.fromCharCode(header[156] || 0x30);
    if (type !== '0' && type !== '5') throw new Error(`the extension bundle holds a tar entry of type '${type}' (${name}), which this reader does not handle`);
    const size = parseInt(header.subarray(124, 136).toString('latin1').replace(/[\0 ]/g, '') || '0', 8);
    const end = at + BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (!Number.isFinite(size) || end > tar.length) throw new Error(`the extension bundle's entry ${name} runs past its end`);
    const full = prefix ? `${prefix}/${name}` : name;
    if (UPDATE_SCRIPT.test(full)) {
      dropped.push(full);
    } else {
      kept.push(full);
      parts.push(tar.subarray(at, end));
    }
    at = end;
  }
  parts.push(Buffer.alloc(2 * BLOCK)); // the end-of-archive marker
  return { tar: Buffer.concat(parts), kept, dropped };
}

/**
 * Where PGlite should read TimescaleDB from: the bundle at `source` without its update scripts,
 * written once per bundle into the system's temporary directory (named by the source's hash, so a
 * new PGlite build gets a new file; written under a temporary name and renamed, so processes
 * starting together never read half a file).
 * @param {URL} source
 * @param {string} [dir] where to keep it (tests give their own)
 * @returns {URL}
 */
export function slimTimescaledbBundle(source, dir = path.join(os.tmpdir(), 'afrates-pglite')) {
  const original = readFileSync(source);
  const hash = createHash('sha256').update(original).digest('hex').slice(0, 16);
  const file = path.join(dir, `timescaledb-${hash}-install-only.tar.gz`);
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    const { tar } = withoutUpdateScripts(gunzipSync(original));
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(partial, gzipSync(tar, { level: 6 }));
    renameSync(partial, file);
  }
  return pathToFileURL(file);
}
