// Real local HTTP receivers for the webhook tests and benchmark: each records what it receives and
// answers as told (a status, or held open until released), and de-duplicates by event id as a
// customer's receiver would. Plus an endpoint registered for a customer of a tier, as the API does.
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createEndpoint } from '../../api/queries/webhooks.js';
import { KeyStore } from '../../api/keys/store.js';
import type { Tier } from '../../lib/tiers.js';
import type { Sql } from '../../lib/db/connect.js';
import { DIVERGENCE_PCT, HEARTBEAT_SECONDS, STALE_SECONDS } from '../../lib/webhooks/events.js';
import { newSigningSecret, secretPrefix, type SecretBox } from '../../lib/webhooks/secrets.js';

export interface Received {
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  /** the event's id, from the body */
  readonly id: string;
  readonly type: string;
}

export type Answer = number | 'hang';

export interface Receiver {
  readonly url: string;
  readonly port: number;
  /** every request, in order of arrival */
  readonly received: Received[];
  /** event ids seen, each once (what a receiver that de-duplicates processes) */
  readonly processed: Set<string>;
  /** how to answer a request (default 200) */
  answer: (r: Received, nth: number) => Answer;
  /** requests held (answer 'hang') and not released yet, whether or not the sender still waits */
  readonly held: number;
  /** resolves once `n` requests have arrived */
  waitFor(n: number, timeoutMs?: number): Promise<void>;
  /** processes every held request (late, perhaps: its sender may have given up) and answers it with `status` */
  release(status?: number): void;
  close(): Promise<void>;
}

export async function startReceiver(answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const received: Received[] = [];
  const processed = new Set<string>();
  const held = new Map<http.ServerResponse, string>();
  const arrivals = new EventEmitter();
  arrivals.setMaxListeners(0);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: { id?: string; type?: string } = {};
      try {
        parsed = JSON.parse(body) as typeof parsed;
      } catch {
        /* kept as is: a test says what it expected */
      }
      const r: Received = { path: req.url ?? '', headers: req.headers, body, id: parsed.id ?? '', type: parsed.type ?? '' };
      received.push(r);
      const a = receiver.answer(r, received.length);
      if (a === 'hang') held.set(res, r.id);
      else {
        if (a >= 200 && a < 300) processed.add(r.id);
        res.writeHead(a).end();
      }
      arrivals.emit('arrived');
    });
  });
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    processed,
    answer,
    get held() {
      return held.size;
    },
    waitFor(n, timeoutMs = 10_000) {
      if (received.length >= n) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          arrivals.off('arrived', check);
          reject(new Error(`the receiver got ${received.length} requests, not ${n}, within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (received.length < n) return;
          clearTimeout(timer);
          arrivals.off('arrived', check);
          resolve();
        };
        arrivals.on('arrived', check);
      });
    },
    release(status = 200) {
      for (const [res, id] of held) {
        if (status >= 200 && status < 300) processed.add(id);
        if (!res.headersSent && !res.destroyed) res.writeHead(status).end();
      }
      held.clear();
    },
    async close() {
      for (const res of held.keys()) res.destroy();
      held.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A new customer of this tier (its first key issued as the API issues keys); returns its id. */
export async function addCustomer(sql: Sql, tier: Tier): Promise<number> {
  const { record } = await new KeyStore(sql).issue({ tier, customerName: `${tier} webhooks customer` });
  const [row] = await sql<{ customer_id: string }[]>`SELECT customer_id FROM api_keys WHERE id = ${record.id}`;
  return Number(row!.customer_id);
}

export interface AddedEndpoint {
  readonly id: number;
  readonly secret: string;
}

/** Registers an endpoint directly (no URL check: the delivery tests check at delivery). */
export async function addEndpoint(
  sql: Sql,
  box: SecretBox,
  customerId: number,
  s: { url: string; events: readonly string[]; pairs?: readonly string[] | null; divergencePct?: number; staleSeconds?: number; heartbeatSeconds?: number },
  now = new Date(),
): Promise<AddedEndpoint> {
  const secret = newSigningSecret();
  const row = await createEndpoint(
    sql,
    customerId,
    {
      url: s.url,
      description: null,
      events: s.events,
      pairs: s.pairs ?? null,
      divergencePct: s.divergencePct ?? DIVERGENCE_PCT.default,
      staleSeconds: s.staleSeconds ?? STALE_SECONDS.default,
      heartbeatSeconds: s.heartbeatSeconds ?? HEARTBEAT_SECONDS.default,
    },
    { sealed: box.seal(secret), prefix: secretPrefix(secret) },
    1_000_000,
    now,
  );
  return { id: Number(row!.id), secret };
}
