// Runs the embedded TimescaleDB in a worker thread: PGlite executes queries synchronously on its
// thread, so on the main thread one long query would freeze every request, even those served
// from memory. Started by lib/db/embedded.ts, which talks to it by messages. Plain JavaScript:
// a worker thread does not inherit the tsx loader.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** @type {{ dataDir: string | undefined }} */
const { dataDir } = workerData;
try {
  const db = await PGlite.create({ dataDir, extensions: { timescaledb } });
  // A reopened directory misbehaves (hypertable inserts, cagg functions) until the library is loaded.
  await db.exec(`LOAD 'timescaledb'`);
  await db.exec(`CREATE EXTENSION IF NOT EXISTS timescaledb`);
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, connectionQueueTimeout: 120_000 });
  await server.start();
  parentPort.on('message', async (message) => {
    if (message !== 'stop') return;
    await server.stop();
    await db.close();
    parentPort.postMessage({ type: 'stopped' });
  });
  parentPort.postMessage({ type: 'ready', conn: server.getServerConn() });
} catch (err) {
  parentPort.postMessage({ type: 'failed', message: err.message });
}
