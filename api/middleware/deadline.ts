// Every request is answered within API_DEADLINE_MS: past it, 503 service_unavailable with
// Retry-After, and whatever the handler still does is discarded. On a database server the
// statement timeout cancels a slow query itself; the embedded database cannot cancel one (and one
// connection serves everything, a pipeline refresh included), so there this is the bound a
// customer sees. A stream (text/event-stream) is not cut: its handler returns once it has started.
import type Koa from 'koa';
import type { AppState } from '../context.js';
import { unavailable } from '../errors.js';

export function deadline(ms: number): Koa.Middleware<AppState> {
  return async function deadline(ctx, next) {
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(unavailable(`The request took longer than ${Math.round(ms / 1000)} s; retry shortly.`, 10)), ms);
    });
    const handled = next();
    handled.catch(() => {}); // if the deadline wins, a later failure of the handler is nobody's
    try {
      await Promise.race([handled, expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}
