// Where log lines go: stdout (or a file), written from the main thread in batches, without ever
// blocking on a reader that stalls, and with nothing lost when the process exits.
//
// Why not pino's own asynchronous destination: it hands each batch to the thread pool, and a batch
// still there when the process exits is either lost or written after the lines that followed it
// (its exit flush cannot wait for the thread, as when a process under load ends with
// process.exit). Here every write is a non-blocking system call on the main thread: it takes what
// the pipe has room for, the rest waits in memory and is tried again shortly. At exit what waits is
// written synchronously, in order.
import fs from 'node:fs';

/** Lines that may wait for a reader that stalls; past it they are counted and dropped. */
export interface LineOutputOptions {
  maxPendingBytes: number;
  /** Called once what waited has been written, with how many lines were dropped meanwhile. */
  onDropped: (lines: number) => void;
}

// Nothing tells the main thread when a full pipe has room again. A reader that took some of the
// last write is reading: try again on the next turn of the event loop (a timer's millisecond
// would cap the log at a 64 KB pipe a millisecond). One that took nothing is tried after RETRY_MS,
// doubling up to MAX_RETRY_MS while it takes nothing.
const RETRY_MS = 1;
const MAX_RETRY_MS = 50;
const BATCH_BYTES = 1024 * 1024; // one write at most: a full pipe takes 64 KB, a file takes it all
const EXIT_PATIENCE_MS = 5_000; // at exit, a reader that takes nothing for this long is given up on

/**
 * The descriptor to write to: a file's path, or 1 or 2 (stdout, stderr). A pipe (a container's
 * stdout) is opened a second time through /proc with O_NONBLOCK: the flag then belongs to this
 * process's own opening alone, not to the pipe's other users (setting it on fd 1 would also set it
 * for a shell or a parent sharing it). Anything else (a file, a terminal, a socket, no /proc) is
 * written as it is: they do not stall.
 */
function openDescriptor(to: 1 | 2 | string): number {
  if (typeof to === 'string') return fs.openSync(to, 'a');
  try {
    if (fs.fstatSync(to).isFIFO()) return fs.openSync(`/proc/self/fd/${to}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    // no /proc, or the pipe is already closed: write the descriptor as it is
  }
  return to;
}

const pause = new Int32Array(new SharedArrayBuffer(4));
const sleepSync = (ms: number) => Atomics.wait(pause, 0, 0, ms);

function isFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'EAGAIN' || code === 'EWOULDBLOCK';
}

/** A writable stream as pino needs one: write(line), plus flush for whoever must see the lines. */
export class LineOutput {
  private readonly fd: number;
  private readonly waiting: string[] = [];
  private waitingBytes = 0;
  private head: Buffer | undefined; // part of a batch the descriptor has not yet taken
  private scheduled = false;
  private retry: NodeJS.Timeout | NodeJS.Immediate | undefined;
  private retryMs = RETRY_MS;
  private dropped = 0;
  private readonly flushed: (() => void)[] = [];

  constructor(to: 1 | 2 | string, private readonly options: LineOutputOptions) {
    this.fd = openDescriptor(to);
    process.on('exit', () => this.flushSync());
  }

  write(line: string): boolean {
    if (this.waitingBytes + line.length > this.options.maxPendingBytes) {
      this.dropped++;
      return false;
    }
    this.waiting.push(line);
    this.waitingBytes += line.length;
    if (!this.scheduled && !this.retry) {
      // lines logged in the same turn of the event loop go out in one system call
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.writeSome();
      }).unref(); // what is waiting when the process ends is written at exit
    }
    return true;
  }

  /** Calls back once every line written so far has been taken by the descriptor. */
  flush(cb?: (err?: Error) => void): void {
    if (cb) this.flushed.push(() => cb());
    this.writeSome();
  }

  /** Writes everything now, blocking; the last word before the process exits. */
  flushSync(): void {
    let idleSince = Date.now();
    do {
      while (this.head || this.waiting.length) {
        const taken = this.takeSome();
        if (taken > 0) idleSince = Date.now();
        else if (taken < 0 || Date.now() - idleSince > EXIT_PATIENCE_MS) return; // broken, or nobody reads
        else sleepSync(1);
      }
    } while (this.reportDropped()); // its line, then written too
  }

  private writeSome(): void {
    this.retry = undefined;
    let progressed = false;
    while (this.head || this.waiting.length) {
      const taken = this.takeSome();
      if (taken < 0) break; // the reader is gone: nothing more to wait for
      if (taken === 0) {
        if (progressed) {
          // the reader is reading: it will have room again in a moment
          this.retryMs = RETRY_MS;
          this.retry = setImmediate(() => this.writeSome()).unref();
        } else {
          this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
          // unref'd: a reader that never reads holds the process only as long as the exit's patience
          this.retry = setTimeout(() => this.writeSome(), this.retryMs).unref();
        }
        return;
      }
      progressed = true;
    }
    this.retryMs = RETRY_MS;
    for (const done of this.flushed.splice(0)) done();
    this.reportDropped();
  }

  /** Says how many lines were dropped, once what waited is out (into a full buffer it would be dropped too). */
  private reportDropped(): boolean {
    if (this.dropped === 0) return false;
    const lines = this.dropped;
    this.dropped = 0;
    this.options.onDropped(lines);
    return true;
  }

  /** One write: bytes the descriptor took, 0 if full, -1 if it can take nothing ever again. */
  private takeSome(): number {
    if (!this.head) {
      let bytes = 0;
      let n = 0;
      while (n < this.waiting.length && (n === 0 || bytes + this.waiting[n]!.length <= BATCH_BYTES)) bytes += this.waiting[n++]!.length;
      this.head = Buffer.from(this.waiting.splice(0, n).join(''));
      this.waitingBytes -= bytes;
    }
    try {
      const taken = fs.writeSync(this.fd, this.head);
      this.head = taken < this.head.length ? this.head.subarray(taken) : undefined;
      return taken;
    } catch (err) {
      if (isFull(err)) return 0;
      this.head = undefined; // EPIPE and the like: the lines have nowhere to go
      this.waiting.length = 0;
      this.waitingBytes = 0;
      return -1;
    }
  }
}
