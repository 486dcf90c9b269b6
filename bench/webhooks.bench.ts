// Webhook fan-out after one cycle: 1,000 endpoints on local receivers, a tenth of which never answer
// (each attempt to them waits for the 5 s time limit), all subscribed to pair.divergence (threshold
// 1 %) and source.failing. The cycle's observations (BTCNGN 3 % off its synthetic price, luno
// failing) go through the service's hook (runAlerts: detectors, events written, worker woken), and
// the worker delivers as the service runs it (default limits). Target: every answering endpoint has
// both of the cycle's events within 5 s of the cycle's end.
//
// Run: node_modules/.bin/tsx bench/webhooks.bench.ts   (or `make bench`)
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLogger } from '../lib/log.js';
import type { PairObservation } from '../lib/webhooks/observation.js';
import { createSecretBox } from '../lib/webhooks/secrets.js';
import { SIGNATURE_HEADER, verifySignature } from '../lib/webhooks/signature.js';
import { runAlerts } from '../pipeline/webhooks/alerts.js';
import { WebhookWorker } from '../pipeline/webhooks/worker.js';
import { openTestDatabase } from '../test/support/db.js';
import { addCustomer, addEndpoint } from '../test/support/webhooks.js';
import { check, header, limitRow, machine, round, runBench, since, table } from './support.js';

const ENDPOINTS = 1_000;
const DEAD_SHARE = 0.1;
const CUSTOMERS = 20; // Enterprise: 50 endpoints each
const RECEIVERS = 10; // answering servers (ports); the dead endpoints share one more that never answers
const LIMIT_S = 5;

interface Arrival {
  readonly endpoint: number;
  readonly id: string;
  readonly at: number;
}

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer(handler);
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function main(): Promise<void> {
  header('webhooks: one cycle fanned out to 1,000 endpoints, a tenth of them never answering', [
    'database: the embedded TimescaleDB in memory; receivers: local HTTP servers in this process',
    `endpoints: ${ENDPOINTS} (${CUSTOMERS} Enterprise customers), ${ENDPOINTS * DEAD_SHARE} on a server that holds every request until the worker's 5 s limit`,
    "events of the cycle: a pair.divergence per endpoint (BTCNGN 3 % off, threshold 1 %) and one source.failing (luno) for every subscriber",
    'worker: the service\'s defaults (256 deliveries at once, 32 to endpoints already failing, 5 s per attempt)',
  ]);
  const db = await openTestDatabase();
  const log = createLogger('silent');
  const box = createSecretBox({ keyHex: '42'.repeat(32), keyDir: '/nonexistent' });
  const arrivals: Arrival[] = [];
  const arrived = new EventEmitter();
  const bodies = new Map<number, { body: string; signature: string }>();
  const healthy: { server: http.Server; port: number }[] = [];
  for (let i = 0; i < RECEIVERS; i++) {
    healthy.push(
      await listen((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const endpoint = Number(req.url!.split('/').at(-1));
          const body = Buffer.concat(chunks).toString();
          arrivals.push({ endpoint, id: (JSON.parse(body) as { id: string }).id, at: performance.now() });
          if (!bodies.has(endpoint)) bodies.set(endpoint, { body, signature: String(req.headers[SIGNATURE_HEADER.toLowerCase()]) });
          res.writeHead(200).end();
          arrived.emit('arrival');
        });
      }),
    );
  }
  const held: http.ServerResponse[] = [];
  const dead = await listen((_req, res) => void held.push(res));

  const secrets = new Map<number, string>();
  const deadIds = new Set<number>();
  const customers: number[] = [];
  for (let c = 0; c < CUSTOMERS; c++) customers.push(await addCustomer(db.sql, 'enterprise'));
  const setupStart = performance.now();
  for (let i = 0; i < ENDPOINTS; i++) {
    const isDead = i % Math.round(1 / DEAD_SHARE) === 0;
    const port = isDead ? dead.port : healthy[i % RECEIVERS]!.port;
    // the path carries the endpoint's index; its id is known once registered
    const ep = await addEndpoint(db.sql, box, customers[i % CUSTOMERS]!, { url: `http://127.0.0.1:${port}/hook/${i}`, events: ['pair.divergence', 'source.failing'], divergencePct: 1 });
    await db.sql`UPDATE webhook_endpoints SET url = ${`http://127.0.0.1:${port}/hook/${ep.id}`} WHERE id = ${ep.id}`;
    secrets.set(ep.id, ep.secret);
    if (isDead) deadIds.add(ep.id);
  }
  const answering = ENDPOINTS - deadIds.size;
  console.log(`  ${ENDPOINTS} endpoints registered in ${round(since(setupStart) / 1000, 1)} s`);

  const worker = new WebhookWorker({ sql: db.sql, log, secrets: box, allowPrivate: true });
  worker.start();
  const observations: PairObservation[] = [{ pair: 'BTCNGN', rate: 154_500_000, synthetic: 150_000_000, divergencePct: 3, ageSeconds: 20, sourcesFailing: ['luno'], at: new Date() }];
  try {
    // the cycle's end: its alerts written (the cycle waits for this, and only this)
    const cycleStart = performance.now();
    await runAlerts({ sql: db.sql, log, observe: async () => observations, wake: () => worker.wake() });
    const cycleEnd = performance.now();
    const events = (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_events`)[0]!.n;
    check(events === ENDPOINTS + 1, `the cycle wrote ${events} events, not ${ENDPOINTS + 1}`);

    // every answering endpoint with both events
    const complete = () => {
      const byEndpoint = new Map<number, Set<string>>();
      for (const a of arrivals) (byEndpoint.get(a.endpoint) ?? byEndpoint.set(a.endpoint, new Set()).get(a.endpoint)!).add(a.id);
      return [...byEndpoint.values()].filter((ids) => ids.size >= 2).length;
    };
    const deadline = cycleEnd + 60_000;
    while (complete() < answering && performance.now() < deadline) await new Promise((r) => arrived.once('arrival', r));
    const allHealthyS = (Math.max(...arrivals.map((a) => a.at)) - cycleEnd) / 1000;
    check(complete() === answering, `only ${complete()} of ${answering} answering endpoints got both events`);
    check(arrivals.every((a) => !deadIds.has(a.endpoint)), 'a dead endpoint answered');
    check(new Set(arrivals.map((a) => `${a.endpoint} ${a.id}`)).size === arrivals.length, 'an event arrived twice at an endpoint that answered it');
    for (const [endpoint, { body, signature }] of bodies) check(verifySignature(secrets.get(endpoint)!, signature, body), `endpoint ${endpoint}: the signature does not verify`);
    const halfS = (arrivals.map((a) => a.at).sort((a, b) => a - b)[Math.floor(arrivals.length / 2)]! - cycleEnd) / 1000;

    // the dead endpoints' first attempts, recorded once their 5 s are up
    const deadRecorded = async () => (await db.sql<{ n: number }[]>`SELECT count(DISTINCT d.endpoint_id)::int AS n FROM webhook_deliveries d JOIN webhook_attempts a ON a.delivery_id = d.id WHERE d.endpoint_id IN (SELECT value::bigint FROM jsonb_array_elements_text(${db.sql.json([...deadIds])}))`)[0]!.n;
    while ((await deadRecorded()) < deadIds.size && performance.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const deadS = since(cycleEnd) / 1000;
    check((await deadRecorded()) === deadIds.size, 'not every dead endpoint had its attempt recorded');
    const [timeouts] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_attempts WHERE error LIKE 'no answer within%'`;

    console.log('');
    console.log(
      table([
        ['figure', 'value', 'limit', 'ratio'],
        limitRow(`every answering endpoint (${answering}) has both events, s after the cycle`, allHealthyS, LIMIT_S),
        ['half of the deliveries made, s after the cycle', round(halfS, 2), '-', ''],
        ['the cycle\'s alert step (detect, write 1,001 events), ms', round(cycleEnd - cycleStart), '-', 'all a cycle waits for'],
        [`dead endpoints (${deadIds.size}) with their timed-out attempt recorded, s`, round(deadS, 2), '-', `${timeouts!.n} timeouts`],
      ]),
    );
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'webhooks',
        at: new Date().toISOString(),
        machine: machine(),
        endpoints: ENDPOINTS,
        dead: deadIds.size,
        events: events,
        all_answering_delivered_s: round(allHealthyS, 3),
        half_delivered_s: round(halfS, 3),
        cycle_alert_step_ms: round(cycleEnd - cycleStart),
        dead_recorded_s: round(deadS, 2),
        limits: { all_answering_delivered_s: LIMIT_S },
      }),
    );
  } finally {
    for (const res of held) res.destroy();
    await worker.stop();
    for (const s of [...healthy, dead]) {
      s.server.closeAllConnections();
      s.server.close();
    }
    await db.close();
  }
}

runBench(main);
