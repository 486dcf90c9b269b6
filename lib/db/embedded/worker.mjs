// Runs the embedded TimescaleDB in a worker thread: PGlite executes queries synchronously on its
// thread, so on the main thread one long query would freeze every request, even those served
// from memory. Started by lib/db/embedded/index.ts, which talks to it by messages:
//   parent -> worker: 'stop' | { type: 'stats', id } | { type: 'dump', id, path } | { type: 'crash' }
//   worker -> parent: ready | failed | stopped | stats | dumped | fatal (PGlite died; the worker exits next)
// Plain JavaScript: a worker thread does not inherit the tsx loader.
import { readFileSync, writeFileSync } from 'node:fs';
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
import { slimTimescaledbBundle } from './bundle.mjs';
import { query } from './frames.mjs';
import { RawProtocol, recordingCallbacks } from './raw.mjs';
import { WireServer } from './wire.mjs';

/** @type {{ dataDir: string | undefined, from?: string, maxMessageBytes?: number, queueTimeoutMs?: number, sharedBuffers: string }} */
const { dataDir, from, maxMessageBytes, queueTimeoutMs, sharedBuffers } = workerData;

/**
 * PGlite's WASM module with PostgreSQL's shared_buffers set to `size` (e.g. '16MB').
 * Its build fixes shared_buffers at 128MB: a literal among the startup options compiled into
 * pglite.wasm (it reads no configuration file and takes no -c options), and PostgreSQL touches
 * all of it at start, so 128 MB would stay resident in a process that also runs the pipeline and
 * the API. The literal is rewritten in a copy of the module, padded to its length with leading spaces
 * (PostgreSQL reads ' 32MB' as 32MB). A PGlite build without that literal fails the start, saying
 * so (lib/db/embedded/index.ts explains the setting); test/lib/db checks the database's own SHOW.
 */
function withSharedBuffers(/** @type {string} */ size) {
  const bytes = readFileSync(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
  const built = Buffer.from('shared_buffers=128MB');
  const ours = Buffer.from(`shared_buffers=${size.padStart(built.length - 'shared_buffers='.length, ' ')}`);
  const at = bytes.indexOf(built);
  if (ours.length !== built.length) throw new Error(`shared_buffers '${size}' is longer than PGlite's '128MB'`);
  if (at < 0 || bytes.indexOf(built, at + 1) >= 0) {
    throw new Error(`cannot set shared_buffers in this PGlite build: its pglite.wasm does not hold '${built}' once`);
  }
  ours.copy(bytes, at);
  return WebAssembly.compile(bytes);
}

/** PGlite's TimescaleDB, read from its bundle without the update scripts (bundle.mjs). */
const timescaledbInstallOnly = {
  name: timescaledb.name,
  setup: async (/** @type {any} */ pg, /** @type {any} */ emscriptenOpts) => {
    const setup = await timescaledb.setup(pg, emscriptenOpts);
    return { ...setup, bundlePath: slimTimescaledbBundle(setup.bundlePath) };
  },
};
/** The same, recording the protocol callbacks PGlite registers: each raw call puts them back (raw.mjs). */
const callbacks = recordingCallbacks(timescaledbInstallOnly);

/** PGlite is gone: say why, once, and end this thread (the parent decides what the process does). */
function fatal(/** @type {Error} */ err) {
  parentPort.postMessage({ type: 'fatal', name: err.name, message: err.message, stack: err.stack });
  // let the message leave before the thread ends
  setImmediate(() => process.exit(1));
}

/** @type {PGlite | undefined} */
let db;
/** @type {WireServer | undefined} */
let server;
try {
  // `from`: a database written by dump() (a tar), instead of a new one made by initdb
  const loadDataDir = from ? new Blob([readFileSync(from)]) : undefined;
  db = await PGlite.create({ dataDir, loadDataDir, extensions: { timescaledb: callbacks.extension }, wasmModule: await withSharedBuffers(sharedBuffers) });
  const registered = callbacks.registered();
  if (!registered) throw new Error('this PGlite build did not register its protocol callbacks where lib/db/embedded/raw.mjs looks for them');
  // A reopened directory misbehaves (hypertable inserts, cagg functions) until the library is loaded.
  await db.exec(`LOAD 'timescaledb'`);
  await db.exec(`CREATE EXTENSION IF NOT EXISTS timescaledb`);
  server = new WireServer({ db, raw: new RawProtocol(db.Module, registered), maxMessageBytes, queueTimeoutMs, onFatal: fatal });
  const { host, port } = await server.start();
  parentPort.postMessage({ type: 'ready', conn: `${host}:${port}` });
} catch (err) {
  parentPort.postMessage({ type: 'failed', message: /** @type {Error} */ (err).message });
}

parentPort.on('message', async (message) => {
  if (!db || !server) return;
  if (message === 'stop') {
    await server.stop();
    await db.close();
    parentPort.postMessage({ type: 'stopped' });
  } else if (message?.type === 'dump') {
    // the whole database as a tar, written to message.path; under PGlite's query lock, which the
    // wire server's batches take too, so it never lands in the middle of one
    try {
      const tar = await db.runExclusive(() => db.dumpDataDir('none'));
      writeFileSync(message.path, Buffer.from(await tar.arrayBuffer()));
      parentPort.postMessage({ type: 'dumped', id: message.id });
    } catch (err) {
      parentPort.postMessage({ type: 'dumped', id: message.id, message: /** @type {Error} */ (err).message });
    }
  } else if (message?.type === 'stats') {
    const heap = v8.getHeapStatistics();
    parentPort.postMessage({ type: 'stats', id: message.id, stats: { ...server.stats(), workerHeapUsedBytes: heap.used_heap_size } });
  } else if (message?.type === 'crash') {
    // For tests: a real PGlite failure. More than about ten errors inside one call abort the WASM
    // instance (docs/embedded-database.md); the wire server never sends that, so it is done directly.
    const failing = Buffer.concat(Array.from({ length: 20 }, () => query('SELECT 1/0')));
    db.execProtocolRaw(new Uint8Array(failing)).then(
      () => fatal(new Error('a simulated crash did not crash PGlite')),
      (err) => fatal(err),
    );
  }
});
