// PGlite's protocol calls without its JavaScript parse of the answer. execProtocol passes every
// message the backend writes through a parser of PGlite's own, which makes an object of each
// (every row, every field decoded) and keeps them in a list until the call ends. The wire server
// only forwards the bytes, so for the length of one call it gives PGlite read and write callbacks
// of its own, then puts PGlite's back: PGlite's query() and close() still use theirs. Measured on
// one database read both ways (docs/embedded-database.md): 10,000 rows of 7 columns in 56 ms
// against 150; the worker's heap holds no answer's rows.
//
// It leans on what PGlite's own execProtocolRawSync calls on the module it builds
// (`_set_read_write_cbs`, `_interactive_one`, `addFunction`, `HEAPU8`); the version is locked and
// test/lib/db/embedded/raw.test.ts compares the answers with execProtocol's, byte for byte.
// PGlite's syncToFs after a call, skipped here, does nothing on the node and memory file systems
// the embedded database runs on.
//
// Plain JavaScript: it runs in the database's worker thread, which has no TypeScript loader.

/**
 * An extension for PGlite.create() that records the read and write callbacks PGlite registers
 * (a pair of WASM table indexes), so that a raw call can put them back. `wrap` is the extension
 * whose setup it extends.
 * @param {{ name: string, setup: (pg: any, opts: any) => Promise<any> }} wrap
 */
export function recordingCallbacks(wrap) {
  /** @type {{ read: number, write: number } | undefined} */
  let registered;
  const extension = {
    name: wrap.name,
    setup: async (/** @type {any} */ pg, /** @type {any} */ emscriptenOpts) => {
      const setup = await wrap.setup(pg, emscriptenOpts);
      const opts = setup.emscriptenOpts ?? emscriptenOpts;
      const prior = opts.onRuntimeInitialized;
      // the module's exports exist from here; PGlite registers its callbacks right after, once,
      // and the setter is its own again from then on
      opts.onRuntimeInitialized = function () {
        const set = this._set_read_write_cbs;
        this._set_read_write_cbs = (/** @type {number} */ read, /** @type {number} */ write) => {
          registered = { read, write };
          this._set_read_write_cbs = set;
          return set(read, write);
        };
        prior?.call(this);
      };
      return { ...setup, emscriptenOpts: opts };
    },
  };
  return { extension, registered: () => registered };
}

/** The answer buffer's size, to which it returns after a larger answer (as PGlite's own does). */
const OUT_BYTES = 64 * 1024;

/** Feeds PGlite's backend whole protocol messages and returns its answer's bytes, unparsed. */
export class RawProtocol {
  #mod;
  #theirs;
  #ours;
  /** @type {Uint8Array} */ #input = new Uint8Array(0);
  #read = 0;
  #out = new Uint8Array(OUT_BYTES);
  #written = 0;

  /**
   * @param {any} mod PGlite's module (`db.Module`)
   * @param {{ read: number, write: number }} theirs PGlite's callbacks, put back after each call
   */
  constructor(mod, theirs) {
    this.#mod = mod;
    this.#theirs = theirs;
    const read = mod.addFunction((/** @type {number} */ at, /** @type {number} */ max) => {
      const n = Math.min(this.#input.length - this.#read, max);
      mod.HEAPU8.set(this.#input.subarray(this.#read, this.#read + n), at);
      this.#read += n;
      return n;
    }, 'iii');
    const write = mod.addFunction((/** @type {number} */ at, /** @type {number} */ length) => {
      const need = this.#written + length;
      if (need > this.#out.length) {
        const grown = new Uint8Array(Math.max(need, this.#out.length * 2));
        grown.set(this.#out.subarray(0, this.#written));
        this.#out = grown;
      }
      this.#out.set(mod.HEAPU8.subarray(at, at + length), this.#written);
      this.#written = need;
      return length;
    }, 'iii');
    this.#ours = { read, write };
  }

  /** One call: `messages` in, the answer out (a copy: the buffer is reused). Run under PGlite's lock. @param {Uint8Array} messages */
  exec(messages) {
    this.#input = messages;
    this.#read = 0;
    this.#written = 0;
    this.#mod._set_read_write_cbs(this.#ours.read, this.#ours.write);
    try {
      this.#mod._interactive_one(messages.length, messages[0]);
    } catch (err) {
      // a WASM abort: the module is gone, and what it failed with is what the owner must hear
      this.#input = new Uint8Array(0);
      throw err;
    }
    this.#mod._set_read_write_cbs(this.#theirs.read, this.#theirs.write);
    this.#input = new Uint8Array(0);
    const answer = Buffer.from(this.#out.subarray(0, this.#written));
    if (this.#out.length > OUT_BYTES) this.#out = new Uint8Array(OUT_BYTES);
    return answer;
  }
}
