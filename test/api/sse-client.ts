// Reads a Server-Sent Events response in a test: events as they come, with a timeout.
export interface SseEvent {
  readonly id: string | null;
  readonly event: string;
  readonly data: string;
}

export interface SseReader {
  readonly status: number;
  readonly headers: Headers;
  /** The next event, or null if none comes within `ms` (or the stream ended). */
  next(ms?: number): Promise<SseEvent | null>;
  /** Whether the server ended the stream within `ms`. */
  ended(ms?: number): Promise<boolean>;
  /** Reads until everything read so far (comments included) satisfies `enough`, or `ms` pass, or the stream ends; whether it did. */
  readUntil(enough: (raw: string) => boolean, ms?: number): Promise<boolean>;
  /** Everything read so far, comments and fields included. */
  readonly raw: () => string;
  close(): void;
  /** The body when the answer was not a stream (an error). */
  json(): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const decoder = new TextDecoder();
  const reader = res.body!.getReader();
  let raw = '';
  let buffer = '';
  let done = false;
  const queue: SseEvent[] = [];
  let pump: Promise<void> | null = null;
  const readMore = () =>
    (pump ??= reader
      .read()
      .then(({ value, done: d }) => {
        if (d) done = true;
        const text = value ? decoder.decode(value, { stream: true }) : '';
        raw += text;
        buffer += text;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const [field, ...rest] = line.split(':');
            const v = rest.join(':').replace(/^ /, '');
            if (field === 'id') id = v;
            else if (field === 'event') event = v;
            else if (field === 'data') data.push(v);
          }
          if (data.length) queue.push({ id, event, data: data.join('\n') });
        }
      })
      .catch(() => {
        done = true;
      })
      .finally(() => {
        pump = null;
      }));
  const timeout = (ms: number) => new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), ms));
  return {
    status: res.status,
    headers: res.headers,
    raw: () => raw,
    async next(ms = 5_000) {
      const deadline = Date.now() + ms;
      while (queue.length === 0 && !done) {
        const left = deadline - Date.now();
        if (left <= 0 || (await Promise.race([readMore(), timeout(left)])) === 'timeout') break;
      }
      return queue.shift() ?? null;
    },
    async ended(ms = 5_000) {
      const deadline = Date.now() + ms;
      while (!done) {
        const left = deadline - Date.now();
        if (left <= 0 || (await Promise.race([readMore(), timeout(left)])) === 'timeout') break;
      }
      return done;
    },
    async readUntil(enough, ms = 5_000) {
      const deadline = Date.now() + ms;
      while (!enough(raw) && !done) {
        const left = deadline - Date.now();
        if (left <= 0 || (await Promise.race([readMore(), timeout(left)])) === 'timeout') break;
      }
      return enough(raw);
    },
    close: () => controller.abort(),
    async json() {
      while (!done) await readMore();
      return JSON.parse(raw);
    },
  };
}
