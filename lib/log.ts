// pino JSON logs. API keys and secrets never reach a log line: the redact list is the backstop,
// the first line of defence is not putting them into log objects at all.
//
// Lines go to stdout asynchronously: a write is handed to the thread pool, and lines logged while it
// is under way go out together in the next one. pino's default, a synchronous write per line, cost
// every request a system call on the event loop (the access log: 7 % of an answer from memory), and
// a log reader that stalled (a full pipe) stalled every request with it. Lines still waiting are
// written out when the process exits, however it exits short of a kill (pino flushes on 'exit').
// A reader that stalls for long: past MAX_PENDING_BYTES, lines are dropped rather than held, and
// how many is logged once what waited has been written.
import { destination, pino, type Logger } from 'pino';

export type { Logger };

/** What may wait for a stalled stdout: ~50,000 access lines. */
export const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * pino's ISO timestamp, written once per millisecond: an answer from memory takes a fraction of
 * one, and formatting the date for every line was a fifth of the access log's cost.
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

type Output = ReturnType<typeof destination>;

/**
 * One output per destination for the whole process, whatever number of loggers write to it: two
 * asynchronous writers on one pipe each wrote their own backlog, in batches larger than a pipe
 * takes whole, and lines came out of order (tested).
 */
const outputs = new Map<1 | string, Output>();

function outputTo(to: 1 | string): Output {
  let out = outputs.get(to);
  if (out) return out;
  out = destination({ dest: to, sync: false, maxLength: MAX_PENDING_BYTES });
  outputs.set(to, out);
  const report = pino(options('warn', {}), out);
  let dropped = 0;
  out.on('drop', () => dropped++);
  // said once all that waited is written: into a full buffer the warning would be dropped itself
  out.on('drain', () => {
    if (dropped === 0) return;
    const lines = dropped;
    dropped = 0;
    report.warn({ dropped: lines }, 'log lines dropped: stdout was not read fast enough');
  });
  return out;
}

/** A logger writing JSON lines to stdout, or to the file `to` names (the API benchmark's). */
export function createLogger(level: string, base: Record<string, unknown> = {}, to: 1 | string = 1): Logger {
  return pino(options(level, base), outputTo(to));
}
