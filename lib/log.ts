// pino JSON logs. API keys and secrets never reach a log line: the redact list is the backstop,
// the first line of defence is not putting them into log objects at all.
//
// Lines go to stdout through lib/log-output.ts: batched, never blocking the service on a reader
// that stalls (pino's default, a synchronous write per line, costs every request a system call and
// stalls them all behind a full pipe), bounded, and written out in full when the process exits.
import { pino, type Logger } from 'pino';
import { LineOutput } from './log-output.js';

export type { Logger };

/** What may wait for a stalled stdout: ~50,000 access lines. */
export const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * pino's ISO timestamp, written once per millisecond: an answer from memory takes a fraction of
 * one, and formatting the date for every line would be a fifth of the access log's cost.
 */
let stampedAt = 0;
let stamp = '';
function isoTimeOncePerMs(): string {
  const now = Date.now();
  if (now !== stampedAt) {
    stampedAt = now;
    stamp = `,"time":"${new Date(now).toISOString()}"`;
  }
  return stamp;
}

const options = (level: string, base: Record<string, unknown>) => ({
  level,
  base: { service: 'afrates', ...base },
  timestamp: isoTimeOncePerMs,
  redact: {
    paths: ['apiKey', 'api_key', 'key', 'secret', 'token', 'req.headers["x-api-key"]', 'headers["x-api-key"]'],
    censor: '[redacted]',
  },
});

/**
 * One output per destination for the whole process, whatever number of loggers write to it: each
 * with its own, lines of two loggers could come out of order behind a slow reader.
 */
const outputs = new Map<1 | 2 | string, LineOutput>();

function outputTo(to: 1 | 2 | string): LineOutput {
  let out = outputs.get(to);
  if (out) return out;
  let reporter: Logger | undefined;
  const report = () => (reporter ??= pino(options('warn', {}), out!));
  out = new LineOutput(to, {
    maxPendingBytes: MAX_PENDING_BYTES,
    onDropped: (lines) => report().warn({ dropped: lines }, 'log lines dropped: stdout was not read fast enough'),
  });
  outputs.set(to, out);
  return out;
}

/**
 * A logger writing JSON lines to stdout, to stderr (`to` 2: a command whose stdout is its result,
 * as make key's key), or to the file `to` names (the API benchmark's).
 */
export function createLogger(level: string, base: Record<string, unknown> = {}, to: 1 | 2 | string = 1): Logger {
  return pino(options(level, base), outputTo(to));
}

/**
 * A line of plain text on stdout, in order with the log lines written there (a command's progress
 * beside its warnings); process.stdout.write would take its own way to the same pipe.
 */
export function printLine(text: string): void {
  outputTo(1).write(`${text}\n`);
}
