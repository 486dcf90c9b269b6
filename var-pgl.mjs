import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { timescaledb } from '@electric-sql/pglite/timescaledb';
const mode = process.argv[2];
const mod = await WebAssembly.compile(readFileSync(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite'))));
const c0 = process.cpuUsage(); const t0 = performance.now();
const opts = { extensions: { timescaledb }, wasmModule: mod };
if (mode === 'load') opts.loadDataDir = new Blob([readFileSync('/tmp/prof/pgdump.tar')]);
const db = await PGlite.create(opts);
const t1 = performance.now();
await db.exec(`LOAD 'timescaledb'`);
await db.exec(`CREATE EXTENSION IF NOT EXISTS timescaledb`);
const t2 = performance.now(); const c = process.cpuUsage(c0);
if (mode === 'dump') { const b = await db.dumpDataDir('none'); writeFileSync('/tmp/prof/pgdump.tar', Buffer.from(await b.arrayBuffer())); }
console.log(mode, { create: (t1-t0).toFixed(0), ext: (t2-t1).toFixed(0), cpuMs: ((c.user+c.system)/1000).toFixed(0) });
