// Finished export files kept in this process's memory, least recently used first out, up to a size
// (besides the files being made, each held by its keeper until whole). A file is a pure function
// of its candle rows (and of the pair, interval, month, format and columns): it is kept under its
// name with the digest of the rows it was made from, and given out again only while the rows
// still have that digest; a month whose rows have moved on (a late trade, an FX rate) is made again.
import { Transform } from 'node:stream';

export interface KeptFile {
  readonly bytes: Buffer;
  /** the digest of the rows the file was made from */
  readonly rows: string;
}

export class FileCache {
  private readonly files = new Map<string, KeptFile>();
  private bytes = 0;

  /** `maxBytes` 0: nothing is kept. */
  constructor(readonly maxBytes: number) {}

  get(key: string): KeptFile | undefined {
    const file = this.files.get(key);
    if (file) {
      this.files.delete(key); // to the back of the line: most recently used
      this.files.set(key, file);
    }
    return file;
  }

  /** Keeps `bytes` under `key`, in place of a file kept there before. */
  set(key: string, bytes: Buffer, rows: string): void {
    if (bytes.length > this.maxBytes) return;
    this.delete(key);
    this.files.set(key, { bytes, rows });
    this.bytes += bytes.length;
    for (const oldest of this.files.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  private delete(key: string): void {
    const file = this.files.get(key);
    if (!file) return;
    this.files.delete(key);
    this.bytes -= file.bytes.length;
  }

  /**
   * A pass-through that keeps what flows through it under `key` once it has all flowed, with the
   * digest `rows()` gives then (a file that fails or grows past the cache's size is not kept).
   */
  keeper(key: string, rows: () => string): Transform {
    const chunks: Buffer[] = [];
    let length = 0;
    return new Transform({
      transform: (chunk: Buffer, _encoding, done) => {
        if (length <= this.maxBytes) chunks.push(chunk);
        length += chunk.length;
        done(null, chunk);
      },
      flush: (done) => {
        if (length <= this.maxBytes) this.set(key, Buffer.concat(chunks, length), rows());
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
