// A Server-Sent Events client over fetch. The browser's EventSource cannot send headers, and the
// API key must travel in X-API-Key (never in a URL), so this reads the stream itself: it parses
// events, remembers the last event id and sends it as Last-Event-ID when it reconnects, and waits
// the server's retry time (or Retry-After when refused) before trying again, unless waiting cannot
// help (worthRetrying).
import { failure, type ApiFailure } from './api.js';

/** The longest wait before a retry: a month's Retry-After overflows a browser timer (2^31 ms) into no wait at all. */
const MAX_WAIT_MS = 3_600_000;

/**
 * Whether a refused stream is worth trying again. A bad request, key or tier cannot change by
 * waiting; nor can a spent month, nor a cap on open streams (the key's, or the address's, while
 * another tab keeps one open): every try counts as a request, and a retry every few seconds would
 * spend the key's minute and month on refusals. A minute's limit (none of its requests left) and a
 * server's trouble pass with time.
 */
function worthRetrying(res: Response, err: ApiFailure): boolean {
  // a 429's RateLimit header names the window that refused it first: "minute", "month", "streams", ...
  if (res.status === 429) return err.code === 'rate_limit_exceeded' && /^"(minute|public)"/.test(res.headers.get('RateLimit') ?? '');
  return res.status >= 500 || res.status === 408;
}

export interface StreamEvent {
  readonly id: string | null;
  readonly event: string;
  readonly data: string;
}

export interface StreamOptions {
  readonly url: string;
  readonly key?: string | null;
  onEvent(event: StreamEvent): void;
  /** 'open' when connected, 'retrying' after a drop, 'refused' when the server said no (with why). */
  onState?(state: 'open' | 'retrying' | 'refused', detail?: ApiFailure): void;
}

/** Starts following a stream; returns the function that stops it. */
export function follow(opts: StreamOptions): () => void {
  let stopped = false;
  let lastId: string | null = null;
  let retryMs = 5_000;
  let controller = new AbortController();

  const parse = (block: string): StreamEvent | null => {
    let id: string | null = null;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue; // comments are heartbeats
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'id') id = value;
      else if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
    }
    return data.length ? { id, event, data: data.join('\n') } : null;
  };

  const run = async (): Promise<void> => {
    while (!stopped) {
      controller = new AbortController();
      let wait = retryMs;
      try {
        const headers: Record<string, string> = { Accept: 'text/event-stream' };
        if (opts.key) headers['X-API-Key'] = opts.key;
        if (lastId !== null) headers['Last-Event-ID'] = lastId;
        const res = await fetch(opts.url, { headers, signal: controller.signal, cache: 'no-store' });
        if (!res.ok || !res.body) {
          const err = failure(res, await res.json().catch(() => null));
          opts.onState?.('refused', err);
          if (!worthRetrying(res, err)) return;
          wait = Math.min((err.retryAfter ?? 30) * 1000, MAX_WAIT_MS);
        } else {
          opts.onState?.('open');
          const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += value.replace(/\r\n?/g, '\n');
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const event = parse(buffer.slice(0, end));
              buffer = buffer.slice(end + 2);
              if (!event) continue;
              if (event.id !== null) lastId = event.id;
              opts.onEvent(event);
            }
          }
          if (!stopped) opts.onState?.('retrying');
        }
      } catch {
        if (stopped) return;
        opts.onState?.('retrying');
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  };
  void run();
  return () => {
    stopped = true;
    controller.abort();
  };
}
