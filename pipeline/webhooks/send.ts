// One delivery attempt: POST the event's JSON to the endpoint, at the address the guard checked
// (lib/webhooks/addresses.ts: resolved and checked now, then connected to as is), within a time
// limit for the whole exchange. Redirects are not followed (a 3xx is a failure): a redirect could
// point anywhere. The response's body is not read.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkTarget, RefusedUrl, type GuardOptions } from '../../lib/webhooks/addresses.js';

export interface Outcome {
  /** dropped because the process is stopping: not an answer of the endpoint's */
  readonly aborted?: true;
  /** the HTTP status answered; null: no answer */
  readonly status: number | null;
  /** why it failed; null: delivered (2xx) */
  readonly error: string | null;
  readonly durationMs: number;
}

export interface SendOptions extends GuardOptions {
  readonly timeoutMs: number;
  /** Aborted: the request is dropped at once and the outcome says `aborted` (the process is stopping). */
  readonly signal?: AbortSignal;
}

/** Errors are recorded with each attempt and shown to the customer: at most this long. */
const MAX_ERROR = 300;
const USER_AGENT = 'afrates-webhooks/1.0 (+https://afrates.io/docs)';

/** Why a connection failed, in words a customer can act on. */
function describe(err: NodeJS.ErrnoException, timeoutMs: number): string {
  switch (err.code) {
    case 'TIMEOUT':
      return `no answer within ${timeoutMs / 1000} s`;
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      return 'connection reset by the endpoint';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      if (err.code?.startsWith('ERR_TLS') || /certificate|SSL|TLS/i.test(err.message)) return `TLS failed: ${err.message.slice(0, 200)}`;
      return `request failed: ${(err.code ?? err.message).slice(0, 200)}`;
  }
}

export async function send(url: string, body: string, headers: Readonly<Record<string, string>>, opts: SendOptions): Promise<Outcome> {
  const started = performance.now();
  const done = (status: number | null, error: string | null): Outcome => ({ status, error: error?.slice(0, MAX_ERROR) ?? null, durationMs: Math.round(performance.now() - started) });
  let target;
  try {
    target = await checkTarget(url, opts);
  } catch (err) {
    if (err instanceof RefusedUrl) return done(null, `refused: the URL ${err.message}`);
    throw err;
  }
  // the checked address, and no other: a second lookup here could answer differently
  const pinned: LookupFunction = (_host, options, callback) => {
    if ((options as { all?: boolean }).all) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const finish = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = client.request(
      target.url,
      {
        method: 'POST',
        lookup: pinned,
        agent: false,
        headers: { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': USER_AGENT, Connection: 'close' },
      },
      (res) => {
        const status = res.statusCode ?? 0;
        res.destroy(); // the answer's status is all that counts
        finish(done(status, status >= 200 && status < 300 ? null : status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}`));
      },
    );
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error('timeout');
      err.code = 'TIMEOUT';
      req.destroy(err);
    }, opts.timeoutMs);
    const abort = () => {
      finish({ ...done(null, 'the sending process stopped'), aborted: true });
      req.destroy();
    };
    if (opts.signal?.aborted) return abort();
    opts.signal?.addEventListener('abort', abort, { once: true });
    req.on('close', () => opts.signal?.removeEventListener('abort', abort));
    req.on('error', (err: NodeJS.ErrnoException) => finish(done(null, describe(err, opts.timeoutMs))));
    req.end(body);
  });
}
