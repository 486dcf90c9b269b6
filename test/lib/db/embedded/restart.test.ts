// The embedded database keeps its data across a restart, aggregates included, with its own shared_buffers
// and TimescaleDB's install script alone.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../../lib/config.js';
import { openDatabase } from '../../../../lib/db/connect.js';
import { SHARED_BUFFERS } from '../../../../lib/db/embedded/index.js';
import { refreshAggregates } from '../../../../lib/db/refresh.js';
import { insertTrades } from '../../../../pipeline/store.js';
import { testLog } from '../../../support/db.js';

const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-var-'));
const config = loadConfig({ AFRATES_VAR_DIR: varDir });

afterAll(() => fs.rmSync(varDir, { recursive: true, force: true }));

describe('embedded TimescaleDB', () => {
  it('finds its data after a restart, and refuses a second process meanwhile', async () => {
    const first = await openDatabase(config, testLog);
    await insertTrades(first.sql, [{ time: new Date('2026-02-01T00:00:00Z'), exchange: 'luno', pair: 'BTCNGN', tradeId: '1', price: 150000000, amount: 0.5, side: null }]);
    await refreshAggregates(first.sql);
    fs.writeFileSync(`${config.dataDir}.lock`, String(process.ppid)); // another live process holds it
    await expect(openDatabase(config, testLog)).rejects.toThrow(/in use by process/);
    fs.writeFileSync(`${config.dataDir}.lock`, String(process.pid));
    await first.close();

    const second = await openDatabase(config, testLog);
    try {
      // PGlite's build would hold 128 MB of buffers resident; ours are set smaller (lib/db/embedded/index.ts)
      expect(await second.sql`SHOW shared_buffers`).toEqual([{ shared_buffers: SHARED_BUFFERS }]);
      // TimescaleDB came without its update scripts (lib/db/embedded/bundle.mjs), installed at its one version
      const paths = await second.sql`SELECT count(*)::int AS n FROM pg_extension_update_paths('timescaledb') WHERE path IS NOT NULL`;
      expect(paths).toEqual([{ n: 0 }]);
      const [installed] = await second.sql`SELECT e.extversion = a.default_version AS current FROM pg_extension e JOIN pg_available_extensions a ON a.name = e.extname WHERE e.extname = 'timescaledb'`;
      expect(installed).toEqual({ current: true });
      const candles = await second.sql`SELECT close::float8 AS close FROM candles WHERE pair = 'BTCNGN' AND interval = '1d'`;
      expect(candles).toEqual([{ close: 150000000 }]);
      // hypertable inserts and cagg refreshes still work on the reopened directory
      await insertTrades(second.sql, [{ time: new Date('2026-02-01T00:03:00Z'), exchange: 'luno', pair: 'BTCNGN', tradeId: '2', price: 160000000, amount: 0.5, side: null }]);
      await refreshAggregates(second.sql);
      const after = await second.sql`SELECT close::float8 AS close FROM candles WHERE pair = 'BTCNGN' AND interval = '1d'`;
      expect(after).toEqual([{ close: 160000000 }]);
    } finally {
      await second.close();
    }
  });

  it('starts in memory from a dump of another, with its data, and works on from there', async () => {
    const file = path.join(varDir, 'copy.tar');
    const original = await openDatabase(config, testLog, { inMemory: true });
    try {
      await insertTrades(original.sql, [{ time: new Date('2026-03-01T00:00:00Z'), exchange: 'luno', pair: 'BTCNGN', tradeId: '1', price: 150000000, amount: 0.5, side: null }]);
      await refreshAggregates(original.sql);
      await original.embedded!.dump(file);
    } finally {
      await original.close();
    }
    const copy = await openDatabase(config, testLog, { inMemory: true, from: file });
    try {
      expect(await copy.sql`SELECT close::float8 AS close FROM candles WHERE pair = 'BTCNGN' AND interval = '1d'`).toEqual([{ close: 150000000 }]);
      await insertTrades(copy.sql, [{ time: new Date('2026-03-01T00:03:00Z'), exchange: 'luno', pair: 'BTCNGN', tradeId: '2', price: 160000000, amount: 0.5, side: null }]);
      await refreshAggregates(copy.sql);
      expect(await copy.sql`SELECT close::float8 AS close FROM candles WHERE pair = 'BTCNGN' AND interval = '1d'`).toEqual([{ close: 160000000 }]);
    } finally {
      await copy.close();
    }
    // a copy is for memory: a data directory is never overwritten by one
    await expect(openDatabase(config, testLog, { from: file })).rejects.toThrow(/only in memory/);
    // a dump that is not there is said at the start, not found out by the first query
    await expect(openDatabase(config, testLog, { inMemory: true, from: path.join(varDir, 'gone.tar') })).rejects.toThrow(/did not start: .*gone\.tar/);
  });
});
