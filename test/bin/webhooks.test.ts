// Webhooks as the service wires them (bin/service.ts): the process that runs the pipeline runs the
// delivery worker, so a test event registered over the API arrives on its own; and after a cycle the
// alerts of what the cycle saw (a venue failing for a pair, then recovering) reach the receiver,
// signed, without anyone calling the worker. A pipeline-only process reads live rates for the
// alerts that need them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../lib/config.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { createSecretBox } from '../../lib/webhooks/secrets.js';
import { SIGNATURE_HEADER, verifySignature } from '../../lib/webhooks/signature.js';
import { insertTrades } from '../../pipeline/store.js';
import { startSimMarket, type SimMarket } from '../../sim/index.js';
import { startService, type Service } from '../../bin/service.js';
import { request } from '../support/api.js';
import { testLog } from '../support/db.js';
import { addCustomer, addEndpoint, startReceiver, type Receiver } from '../support/webhooks.js';

const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-webhooks-'));
let sim: SimMarket;
let service: Service;
let receiver: Receiver;

beforeAll(async () => {
  sim = await startSimMarket({ seed: 5, historyStart: Date.now() - 30 * 60_000 });
  receiver = await startReceiver();
  const config = loadConfig({ AFRATES_VAR_DIR: varDir, PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1', MARKET: 'simulated', SIM_URL: sim.url, LOG_LEVEL: 'silent', WEBHOOKS_ALLOW_PRIVATE: '1' });
  service = await startService(config, testLog, { collect: false });
}, 120_000);
afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await sim?.stop();
  fs.rmSync(varDir, { recursive: true, force: true });
});

describe('the service', () => {
  let key: string;
  let secret: string;
  let id: number;

  it('delivers a test event registered over its API, through its own worker', async () => {
    key = (await service.api!.deps.keys.issue({ tier: 'builder', customerName: 'Webhook Ops' })).apiKey;
    const post = (p: string, body?: unknown) =>
      request(service.api!.url, 'POST', p, { headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const made = await post('/v1/account/webhooks', { url: receiver.url, events: ['source.failing'], pairs: ['BTCNGN'] });
    expect(made.status).toBe(201);
    ({ secret, endpoint: { id } } = made.body);
    const test = await post(`/v1/account/webhooks/${id}/test`);
    expect(test.status).toBe(202);
    await receiver.waitFor(1);
    expect(receiver.received[0]).toMatchObject({ id: test.body.event.id, type: 'test' });
    expect(verifySignature(secret, receiver.received[0]!.headers[SIGNATURE_HEADER.toLowerCase()] as string, receiver.received[0]!.body)).toBe(true);
  });

  it("sends a cycle's alerts: a venue failing for a pair, and its recovery after two clear cycles", async () => {
    const sql = service.db.sql;
    await sql`INSERT INTO venue_markets (exchange, pair, symbol) VALUES ('luno', 'BTCNGN', 'XBTNGN') ON CONFLICT DO NOTHING`;
    await sql`
      INSERT INTO venue_health (exchange, pair, last_attempt_at, last_success_at, last_trade_at, consecutive_failures)
      VALUES ('luno', 'BTCNGN', now(), now() - INTERVAL '10 minutes', now() - INTERVAL '10 minutes', 3)
      ON CONFLICT (exchange, pair) DO UPDATE SET consecutive_failures = 3, last_trade_at = now() - INTERVAL '10 minutes'`;
    await service.pipeline!.runFxCycle(); // a cycle: its end runs the alerts
    await receiver.waitFor(2);
    const failing = receiver.received[1]!;
    expect(JSON.parse(failing.body)).toMatchObject({ type: 'source.failing', pair: 'BTCNGN', data: { state: 'started', exchange: 'luno' } });
    expect(verifySignature(secret, failing.headers[SIGNATURE_HEADER.toLowerCase()] as string, failing.body)).toBe(true);

    await sql`UPDATE venue_health SET consecutive_failures = 0, last_trade_at = now() WHERE exchange = 'luno' AND pair = 'BTCNGN'`;
    await service.pipeline!.runFxCycle();
    await service.pipeline!.runFxCycle();
    await receiver.waitFor(3);
    expect(JSON.parse(receiver.received[2]!.body)).toMatchObject({ type: 'source.failing', pair: 'BTCNGN', data: { state: 'ended', exchange: 'luno' } });
    expect(receiver.received.filter((r) => r.type === 'source.failing')).toHaveLength(2); // once each, not once per cycle
  });
});

describe('receivers that hold their requests open', () => {
  it('delay no cycle: cycles run to their end on the same database while every delivery still waits', async () => {
    const slow = await startReceiver(() => 'hang');
    try {
      const key = (await service.api!.deps.keys.issue({ tier: 'enterprise', customerName: 'Slow Receivers' })).apiKey;
      const post = (p: string, body?: unknown) =>
        request(service.api!.url, 'POST', p, { headers: { 'X-API-Key': key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const ids: number[] = [];
      for (let i = 0; i < 10; i++) {
        const made = await post('/v1/account/webhooks', { url: `${slow.url}?n=${i}`, events: ['source.failing'] });
        expect(made.status).toBe(201);
        ids.push(made.body.endpoint.id);
      }
      for (const id of ids) expect((await post(`/v1/account/webhooks/${id}/test`)).status).toBe(202);
      await slow.waitFor(ids.length); // every delivery in flight, none answered

      // the worker gives a request 5 s: had it held the database meanwhile, the cycles would wait
      // for those timeouts, and their failed attempts would be recorded before the cycles ended
      await service.pipeline!.runFxCycle();
      await service.pipeline!.runFxCycle();
      const [{ attempts }] = await service.db.sql<[{ attempts: number }]>`
        SELECT count(*)::int AS attempts FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
        WHERE d.endpoint_id IN ${service.db.sql(ids)}`;
      expect(attempts).toBe(0);
      expect(slow.held).toBe(ids.length);
    } finally {
      slow.release();
      await slow.close();
    }
  });
});

describe('a pipeline-only process (ROLE=pipeline)', () => {
  it("reads live rates for an endpoint watching a pair's age, and alerts it", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-webhooks-pipeline-'));
    const keyHex = 'ab'.repeat(32);
    const watcher = await startReceiver();
    const config = loadConfig({ AFRATES_VAR_DIR: dir, ROLE: 'pipeline', MARKET: 'simulated', SIM_URL: sim.url, LOG_LEVEL: 'silent', WEBHOOKS_ALLOW_PRIVATE: '1', WEBHOOK_SECRET_KEY: keyHex });
    const pipelineOnly = await startService(config, testLog, { collect: false });
    try {
      expect(pipelineOnly.api).toBeNull();
      const sql = pipelineOnly.db.sql;
      // BTCNGN's newest trade is ten minutes old; the endpoint calls a pair stale after a minute
      await insertTrades(sql, [{ time: new Date(Date.now() - 10 * 60_000), exchange: 'luno', pair: 'BTCNGN', tradeId: 'old-1', price: '150000000', amount: '0.01', side: 'buy' }]);
      await refreshAggregates(sql);
      const box = createSecretBox({ keyHex, keyDir: path.join(dir, 'keys') });
      const customer = await addCustomer(sql, 'builder');
      const endpoint = await addEndpoint(sql, box, customer, { url: watcher.url, events: ['pair.stale'], pairs: ['BTCNGN'], staleSeconds: 60 });
      await pipelineOnly.pipeline!.runFxCycle();
      await watcher.waitFor(1);
      const stale = JSON.parse(watcher.received[0]!.body);
      expect(stale).toMatchObject({ type: 'pair.stale', pair: 'BTCNGN', data: { state: 'started', threshold_seconds: 60 } });
      expect(stale.data.age_seconds).toBeGreaterThan(590);
      expect(verifySignature(endpoint.secret, watcher.received[0]!.headers[SIGNATURE_HEADER.toLowerCase()] as string, watcher.received[0]!.body)).toBe(true);
    } finally {
      await pipelineOnly.stop();
      await watcher.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
