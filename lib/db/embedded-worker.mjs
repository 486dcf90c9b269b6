// Runs the embedded TimescaleDB in a worker thread: PGlite executes queries synchronously on its
// thread, so on the main thread one long query would freeze every request, even those served
// from memory. Started by lib/db/embedded.ts, which talks to it by messages:
//   parent -> worker: 'stop' | { type: 'stats', id } | { type: 'crash' }
//   worker -> parent: ready | failed | stopped | stats | fatal (PGlite died; the worker exits next)
// Plain JavaScript: a worker thread does not inherit the tsx loader.
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
import { query } from './embedded-frames.mjs';
import { WireServer } from './embedded-wire.mjs';

/** @type {{ dataDir: string | undefined, maxMessageBytes?: number, queueTimeoutMs?: number }} */
const { dataDir, maxMessageBytes, queueTimeoutMs } = workerData;

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
  db = await PGlite.create({ dataDir, extensions: { timescaledb } });
  // A reopened directory misbehaves (hypertable inserts, cagg functions) until the library is loaded.
  await db.exec(`LOAD 'timescaledb'`);
  await db.exec(`CREATE EXTENSION IF NOT EXISTS timescaledb`);
  server = new WireServer({ db, maxMessageBytes, queueTimeoutMs, onFatal: fatal });
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
  } else if (message?.type === 'stats') {
    const heap = v8.getHeapStatistics();
    parentPort.postMessage({ type: 'stats', id: message.id, stats: { ...server.stats(), workerHeapUsedBytes: heap.used_heap_size } });
  } else if (message?.type === 'crash') {
    // For tests: the PGlite failure issue 7 measured, for real. More than about ten errors inside
    // one call abort the WASM instance; the wire server never sends that, so it is done directly.
    const failing = Buffer.concat(Array.from({ length: 20 }, () => query('SELECT 1/0')));
    db.execProtocolRaw(new Uint8Array(failing)).then(
      () => fatal(new Error('a simulated crash did not crash PGlite')),
      (err) => fatal(err),
    );
  }
});
