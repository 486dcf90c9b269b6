// Finished export files kept in this process's memory, least recently used first out, up to a size
// (besides the files being made, each held by its keeper until whole). A file is a pure function
// of its candle rows (and of the pair, interval, month, format and columns) and is kept under the
// digest of the rows as they stood before it was made: rows only move forward, so a file is never
// older than its key says; a month whose rows have moved on (a late trade, an FX rate) has a new
// digest and is made again.
import { Transform } from 'node:stream';

export class FileCache {
  private readonly files = new Map<string, Buffer>();
  private bytes = 0;

  /** `maxBytes` 0: nothing is kept. */
  constructor(readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const file = this.files.get(key);
    if (file) {
      this.files.delete(key); // to the back of the line: most recently used
      this.files.set(key, file);
    }
    return file;
  }

  set(key: string, bytes: Buffer): void {
    if (bytes.length > this.maxBytes || this.files.has(key)) return;
    this.files.set(key, bytes);
    this.bytes += bytes.length;
    for (const [oldest, file] of this.files) {
      if (this.bytes <= this.maxBytes) break;
      this.files.delete(oldest);
      this.bytes -= file.length;
    }
  }

  /**
   * A pass-through that keeps what flows through it under `key` once it has all flowed (a file
   * that fails or grows past the cache's size is not kept).
   */
  keeper(key: string): Transform {
    const chunks: Buffer[] = [];
    let length = 0;
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (length <= this.maxBytes) chunks.push(chunk);
        length += chunk.length;
        done(null, chunk);
      },
      flush: (done) => {
        if (length <= this.maxBytes) this.set(key, Buffer.concat(chunks, length));
        done();
      },
    });
  }

  /** Files and bytes held now. */
  get size(): { files: number; bytes: number } {
    return { files: this.files.size, bytes: this.bytes };
  }

  clear(): void {
    this.files.clear();
    this.bytes = 0;
  }
}
