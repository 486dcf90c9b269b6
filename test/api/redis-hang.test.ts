// Redis that stops answering (paused, failing over, a dropped link) rather than refusing
// connections. Every keyed request waited for its 15 s deadline and answered 503; the service
// must fall back as it does when Redis is down: limits in memory, keys from the database.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

const PORT = 20_000 + Math.floor(Math.random() * 10_000);
let redis: ChildProcess;
let t: TestApi;

beforeAll(async () => {
  redis = spawn('redis-server', ['--port', String(PORT), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  t = await startTestApi({ redisUrl: `redis://127.0.0.1:${PORT}` });
});
afterAll(async () => {
  redis?.kill('SIGCONT');
  redis?.kill('SIGKILL');
  await t?.close();
});

describe('a Redis that hangs', () => {
  it('leaves requests answered within two seconds (not the 15 s deadline), and health saying so', async () => {
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', t.keys.builder)).status).toBe(200);
    const fresh = await t.key('builder'); // in no cache yet: looked up in the database
    redis.kill('SIGSTOP');
    try {
      for (const [path, key] of [['/v1/rates/live?pairs=BTCNGN', t.keys.builder], ['/v1/rates/live?pairs=BTCNGN', fresh], ['/v1/board', undefined]] as const) {
        const started = Date.now();
        const res = await t.get(path, key);
        expect(res.status, path).toBe(200);
        expect(Date.now() - started, path).toBeLessThan(2_000);
      }
      const health = await t.get('/v1/health');
      expect(health.body.services.redis).toBe('error');
    } finally {
      redis.kill('SIGCONT');
    }
  });
});
