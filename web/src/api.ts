// Calls to the afrates API on this origin. A key travels only in the X-API-Key header, never in a
// URL. A failure is the API's own error ({error, message, status}) as an ApiFailure. An answer
// from the simulated market puts the note saying so on the page (simulated.ts).
import { noteMarket } from './simulated.js';

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
  }
}

export interface CallOptions {
  readonly key?: string | null;
  readonly method?: 'GET' | 'POST' | 'DELETE';
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

export async function call<T>(path: string, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (opts.key) headers['X-API-Key'] = opts.key;
  if (opts.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, { method: opts.method ?? 'GET', headers, body: opts.body === undefined ? undefined : JSON.stringify(opts.body), signal: opts.signal, cache: 'no-store' });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure(0, 'network_error', 'The server could not be reached; check the connection and retry.');
  }
  noteMarket(res);
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: reported below */
  }
  if (!res.ok) throw failure(res, body);
  return body as T;
}

/** The API's error from a response that is not ok. */
export function failure(res: Response, body: unknown): ApiFailure {
  const e = body as { error?: string; message?: string } | null;
  const retry = Number(res.headers.get('Retry-After'));
  return new ApiFailure(res.status, e?.error ?? 'http_error', e?.message ?? `The server answered ${res.status}.`, Number.isFinite(retry) && retry > 0 ? retry : null);
}

export const errorText = (err: unknown): string => (err instanceof ApiFailure ? err.message : 'Something went wrong; retry shortly.');
