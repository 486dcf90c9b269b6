// PGlite's protocol without its JavaScript parse (lib/db/embedded/raw.mjs), against the real PGlite:
// the same answer bytes as PGlite's own execProtocol, for rows, errors and transactions, and PGlite's
// own calls still working between raw ones. It fails first if a PGlite upgrade moves what raw.mjs
// leans on.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawProtocol, recordingCallbacks } from '../../../../lib/db/embedded/raw.mjs';
import { assemble, query } from '../../../../lib/db/embedded/frames.mjs';

/** An extension that changes nothing, as the worker's TimescaleDB one is wrapped. */
const plain = { name: 'plain', setup: async (_pg: unknown, emscriptenOpts: unknown) => ({ emscriptenOpts }) };

let ours: PGlite; // answers through RawProtocol
let theirs: PGlite; // the same statements through execProtocol
let raw: RawProtocol;

beforeAll(async () => {
  const callbacks = recordingCallbacks(plain);
  ours = await PGlite.create({ extensions: { plain: callbacks.extension } });
  theirs = await PGlite.create();
  const registered = callbacks.registered();
  expect(registered, 'PGlite registered its protocol callbacks through the module').toBeDefined();
  raw = new RawProtocol(ours.Module, registered!);
});
afterAll(async () => {
  await ours?.close();
  await theirs?.close();
});

const both = async (...messages: Buffer[]) => {
  const batch = new Uint8Array(assemble(messages));
  const mine = await ours.runExclusive(async () => raw.exec(batch));
  const expected = Buffer.from((await theirs.execProtocol(batch, { throwOnError: false })).data);
  return { mine, expected };
};

/** The message types of a backend answer, in order (a type byte, then a length that counts itself). */
function types(bytes: Buffer): string {
  let out = '';
  for (let at = 0; at < bytes.length; at += 1 + bytes.readInt32BE(at + 1)) out += String.fromCharCode(bytes[at]!);
  return out;
}

describe('a raw call', () => {
  it("answers the bytes PGlite's execProtocol answers: many wide rows, an error, a transaction", async () => {
    const cases = [
      [query(`SELECT g, md5(g::text) || repeat('y', 300) AS t FROM generate_series(1, 2000) g`)],
      [query('SELECT 1/0')],
      [query('BEGIN'), query(`CREATE TABLE r (id int)`), query('INSERT INTO r SELECT generate_series(1, 50)'), query('SELECT count(*) FROM r'), query('ROLLBACK')],
      [query(`SELECT 'ünïcödé ' || repeat('€', 5000) AS t`)],
    ];
    for (const messages of cases) {
      const { mine, expected } = await both(...messages);
      expect(mine.equals(expected), `${messages.length} message(s): ${types(mine)} against ${types(expected)}`).toBe(true);
    }
    const { mine } = await both(query(`SELECT g FROM generate_series(1, 2000) g`));
    expect(types(mine)).toBe(`T${'D'.repeat(2000)}CZ`);
  });

  it("leaves PGlite's own calls working: its query() between raw calls, in the same session", async () => {
    await ours.runExclusive(async () => raw.exec(new Uint8Array(query(`SET application_name = 'raw'`))));
    expect((await ours.query<{ name: string }>('SELECT current_setting($1) AS name', ['application_name'])).rows).toEqual([{ name: 'raw' }]);
    const { mine } = await both(query(`SELECT current_setting('application_name')`));
    expect(mine.includes(Buffer.from('raw'))).toBe(true);
  });

  it("throws PGlite's own failure when the call aborts its WASM instance (about ten errors in one call)", async () => {
    const callbacks = recordingCallbacks(plain);
    const dying = await PGlite.create({ extensions: { plain: callbacks.extension } });
    const rawDying = new RawProtocol(dying.Module, callbacks.registered()!);
    const failing = new Uint8Array(assemble(Array.from({ length: 20 }, () => query('SELECT 1/0'))));
    let thrown: unknown;
    try {
      rawDying.exec(failing);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(Error);
    expect(String((thrown as Error).message)).toMatch(/abort/i);
  });

  it('copies its answer out: a later call does not change an earlier answer', async () => {
    const first = await ours.runExclusive(async () => raw.exec(new Uint8Array(query(`SELECT repeat('a', 100000)`))));
    const copy = Buffer.from(first);
    await ours.runExclusive(async () => raw.exec(new Uint8Array(query(`SELECT repeat('b', 100000)`))));
    expect(first.equals(copy)).toBe(true);
  });
});
