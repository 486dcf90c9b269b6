// The one statement-size rule: every statement that writes many rows, or a large value, is split so
// that its parameters stay under MAX_STATEMENT_BYTES. One protocol message over ~64 KB kills the
// embedded database (shared/embedded-timescaledb.md); a server doesn't mind, and the same code runs.

export const MAX_STATEMENT_BYTES = 24_000;
const PARAM_OVERHEAD_BYTES = 8; // length word + format code per parameter, with room to spare

/**
 * Bytes a parameter takes on the wire: a Date as its text, bytes as \x and hex, an object or array
 * (a row of a JSON parameter) as its JSON, anything else as its text.
 */
function wireBytes(v: unknown): number {
  if (v instanceof Date) return 32;
  if (v instanceof Uint8Array) return 2 + 2 * v.length;
  if (typeof v === 'object' && v !== null) return Buffer.byteLength(JSON.stringify(v));
  return Buffer.byteLength(String(v ?? ''));
}

/**
 * Splits rows into batches whose parameters stay under maxBytes: `params` gives a row's values (its
 * parameters, or the objects it adds to a JSON parameter).
 */
export function batchesUnder<T>(rows: readonly T[], params: (row: T) => unknown[], maxBytes = MAX_STATEMENT_BYTES): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = params(row).reduce<number>((sum, v) => sum + PARAM_OVERHEAD_BYTES + wireBytes(v), 0);
    if (size > maxBytes) throw new Error(`a single row needs ${size} bytes of parameters, over the ${maxBytes} limit`);
    if (bytes + size > maxBytes && batch.length > 0) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(row);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/** Splits a byte string into pieces each of which, as one parameter, stays under maxBytes (at least one piece). */
export function piecesUnder(bytes: Uint8Array, maxBytes = MAX_STATEMENT_BYTES): Uint8Array[] {
  const per = Math.floor((maxBytes - PARAM_OVERHEAD_BYTES - 2) / 2);
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length || pieces.length === 0; at += per) pieces.push(bytes.subarray(at, at + per));
  return pieces;
}
