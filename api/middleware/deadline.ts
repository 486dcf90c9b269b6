// Every request is answered within API_DEADLINE_MS: past it, 503 service_unavailable with
// Retry-After (or 408 request_timeout when the client has not yet sent all of its body: the wait
// was the client's), and whatever the handler still does is discarded. On a database server the
// statement timeout cancels a slow query itself; the embedded database cannot cancel one (and one
// connection serves everything, a pipeline refresh included), so there this is the bound a
// customer sees. A stream (text/event-stream) is not cut: its handler returns once it has started.
//
// One timer for all requests, sweeping every SWEEP_MS, rather than a timer each: a deadline is
// seconds long and may be kept up to SWEEP_MS late, while a timer per request would cost a few
// percent of an answer from memory.
import { ApiError, unavailable } from '../errors.js';

const SWEEP_MS = 100;

interface Pending {
  readonly expiresAt: number;
  readonly ms: number;
  /** the request: its `complete` says whether all of its body has arrived */
  readonly req: { readonly complete: boolean };
  readonly reject: (err: unknown) => void;
}

const pending = new Set<Pending>();
let sweeper: NodeJS.Timeout | undefined;

function sweep(): void {
  const now = Date.now();
  for (const p of pending) {
    if (p.expiresAt > now) continue;
    pending.delete(p);
    const seconds = Math.round(p.ms / 1000);
    p.reject(
      p.req.complete
        ? unavailable(`The request took longer than ${seconds} s; retry shortly.`, 10)
        : new ApiError(408, 'request_timeout', `The request body was not received within ${seconds} s.`),
    );
  }
  if (pending.size === 0) {
    clearInterval(sweeper);
    sweeper = undefined;
  }
}

/** `handled`, or a 503 (408 while `req` is not complete) once `ms` have passed without it settling. */
export function withinDeadline(handled: Promise<unknown>, ms: number, req: { readonly complete: boolean }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const entry: Pending = { expiresAt: Date.now() + ms, ms, req, reject };
    pending.add(entry);
    if (!sweeper) {
      sweeper = setInterval(sweep, Math.min(SWEEP_MS, ms));
      sweeper.unref();
    }
    // once the sweep has rejected it, the handler's later outcome is nobody's (settling twice does nothing)
    handled.then(
      () => {
        pending.delete(entry);
        resolve();
      },
      (err: unknown) => {
        pending.delete(entry);
        reject(err);
      },
    );
  });
}
