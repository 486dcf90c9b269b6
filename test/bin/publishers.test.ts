// Two pipeline processes on one database (as on two hosts), each collecting its own venues
// (VENUES), publishing through one lease: the one publishing is frozen (SIGSTOP) in the middle of
// certifying the history's backlog and woken after the other has taken over; then the new
// publisher is killed outright (SIGKILL) and the first takes over again. What customers get is
// judged from an API process's answers (the signed heads a monitor reads) and the stored records:
// heads only go forward, no record is stored twice, every settled bucket is certified, and a
// webhook endpoint's heartbeats (one a second) each reach it once. Real
// processes (bin/serve.ts) on a real server: the embedded database admits one connection, so two
// processes cannot share it (TEST_DATABASE_URL).
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSecretBox } from '../../lib/webhooks/secrets.js';
import { EVENT_ID_HEADER } from '../../lib/webhooks/signature.js';
import { startSimMarket } from '../../sim/index.js';
import { freshDatabaseUrl } from '../support/db.js';

const root = path.resolve(import.meta.dirname, '../..');
const onServer = Boolean(process.env.TEST_DATABASE_URL);
const NO_SERVER = 'needs TEST_DATABASE_URL (a TimescaleDB server): the embedded database admits one connection, so two pipeline processes cannot share it';

const started: ChildProcess[] = [];
const varDirs: string[] = [];
afterAll(() => {
  for (const p of started) {
    p.kill('SIGCONT');
    p.kill('SIGKILL');
  }
  for (const d of varDirs) fs.rmSync(d, { recursive: true, force: true });
});

interface Proc {
  readonly proc: ChildProcess;
  readonly exit: Promise<number | null>;
  readonly log: () => string;
  /** Resolves once the log holds `text` after `from` characters (fails after two minutes, saying what it waited for). */
  heard(text: string, from?: number): Promise<void>;
}

function serve(env: Record<string, string | undefined>): Proc {
  const varDir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-publishers-'));
  varDirs.push(varDir);
  const proc = spawn(process.execPath, ['--import', 'tsx', 'bin/serve.ts'], { cwd: root, env: { ...env, AFRATES_VAR_DIR: varDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(proc);
  let out = '';
  const waiters: Array<{ text: string; from: number; resolve: () => void }> = [];
  const hear = (chunk: Buffer) => {
    out += chunk.toString();
    for (const w of [...waiters]) if (out.indexOf(w.text, w.from) >= 0) waiters.splice(waiters.indexOf(w), 1) && w.resolve();
  };
  proc.stdout!.on('data', hear);
  proc.stderr!.on('data', hear);
  const exit = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return {
    proc,
    exit,
    log: () => out,
    heard: (text, from = 0) =>
      new Promise<void>((resolve, reject) => {
        if (out.indexOf(text, from) >= 0) return resolve();
        const timer = setTimeout(() => reject(new Error(`waited 120 s for ${text}: ${out.slice(-3000)}`)), 120_000).unref();
        waiters.push({ text, from, resolve: () => (clearTimeout(timer), resolve()) });
        void exit.then((code) => reject(new Error(`exited (${code}) before saying ${text}: ${out.slice(-3000)}`)));
      }),
  };
}

/** Asks `probe` every 100 ms until it answers something other than undefined (within `ms`). */
async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await probe().catch(() => undefined);
    if (answer !== undefined) return answer;
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('two pipeline processes on one database', () => {
  it('publish once, through one publisher, across a freeze and a kill', async (ctx) => {
    if (!onServer) ctx.skip(NO_SERVER);
    const fresh = await freshDatabaseUrl();
    const sim = await startSimMarket({ seed: 7, historyStart: Date.now() - 2 * 3_600_000 });
    const sql = postgres(fresh.url, { max: 2, onnotice: () => {} });
    // a customer's webhook receiver: every delivery's event id, as it arrives
    const received: string[] = [];
    const receiver = http.createServer((req, res) => {
      received.push(String(req.headers[EVENT_ID_HEADER.toLowerCase()]));
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const env: Record<string, string | undefined> = {
        ...process.env,
        DATABASE_URL: fresh.url,
        MARKET: 'simulated',
        SIM_URL: sim.url,
        STREAMS: '0',
        CYCLE_SECONDS: '2',
        LOG_LEVEL: 'info',
        PORT: '0',
        ADMIN_PORT: '0',
        HOST: '127.0.0.1',
        // both sign with the same keys, as the processes of one deployment must
        CERT_HMAC_SECRET: crypto.randomBytes(32).toString('hex'),
        CERT_ED25519_PRIVATE_KEY: crypto.generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        WEBHOOK_SECRET_KEY: crypto.randomBytes(32).toString('hex'),
        WEBHOOKS_ALLOW_PRIVATE: '1', // the receiver is on loopback
      };
      delete env.REDIS_URL;
      delete env.DATABASE_READ_URL;
      // started together, each with its own venues
      const a = serve({ ...env, ROLE: 'pipeline', VENUES: 'luno,binance' });
      const b = serve({ ...env, ROLE: 'pipeline', VENUES: 'valr,quidax' });
      await Promise.all([a.heard('"afrates running"'), b.heard('"afrates running"')]);
      const byPid = new Map([[a.proc.pid!, a], [b.proc.pid!, b]]);
      // an Enterprise customer's endpoint with a heartbeat every second, as the API stores one
      const box = createSecretBox({ keyHex: env.WEBHOOK_SECRET_KEY, keyDir: os.tmpdir() });
      await sql`INSERT INTO customers (id, tier, name, email) VALUES (1, 'enterprise', 'Hooks', 'hooks@example.test')`;
      await sql`
        INSERT INTO webhook_endpoints (customer_id, url, events, divergence_pct, stale_seconds, heartbeat_seconds, heartbeat_due_at, secret, secret_prefix)
        VALUES (1, ${`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`}, ${sql.json(['heartbeat'])}, 1, 600, 1, now(), ${box.seal('whsec_test_secret')}, 'whsec_te')`;

      // both are seen, with their venues; one of them publishes
      const seen = await until('both processes seen', 30_000, async () => {
        const rows = await sql<{ pid: number; role: string; venues: string[] }[]>`SELECT pid, role, venues FROM processes ORDER BY pid`;
        return rows.length === 2 ? rows : undefined;
      });
      expect(new Map(seen.map((r) => [r.pid, [...r.venues].sort().join(',')]))).toEqual(new Map([[a.proc.pid, 'binance,luno'], [b.proc.pid, 'quidax,valr']]));
      const holder = async () => (await sql<{ pid: number; token: string }[]>`SELECT pid, token::text FROM publisher_lease WHERE expires_at > clock_timestamp()`)[0];
      const first = await until('a publisher', 30_000, holder);
      const publisher = byPid.get(first.pid)!;
      const other = publisher === a ? b : a;
      expect(publisher.log()).toContain('publisher lease taken: this process publishes');

      // 1. the publisher frozen while it certifies the two hours of history
      await until('certificates being issued', 120_000, async () => ((await sql`SELECT 1 FROM certificates LIMIT 1`).length ? true : undefined));
      publisher.proc.kill('SIGSTOP');
      const frozenAt = new Date();
      const second = await until('the other process to take over', 60_000, async () => {
        const h = await holder();
        return h && h.pid === other.proc.pid ? h : undefined;
      });
      expect(BigInt(second.token)).toBeGreaterThan(BigInt(first.token));
      await other.heard('publisher lease taken: this process publishes');
      // the other publishes meanwhile: a head signed after the freeze
      await until('a head from the new publisher', 120_000, async () => ((await sql`SELECT 1 FROM transparency_heads WHERE signed_at > ${frozenAt}`).length ? true : undefined));
      const woken = publisher.log().length;
      publisher.proc.kill('SIGCONT');
      // it wakes, finds it no longer publishes, and stores nothing stale
      await publisher.heard('no longer publishes', woken);

      // 2. the new publisher killed outright: the first takes over again
      other.proc.kill('SIGKILL');
      await other.exit;
      const third = await until('the first process to take over again', 60_000, async () => {
        const h = await holder();
        return h && h.pid === publisher.proc.pid && h.token !== first.token ? h : undefined;
      });
      expect(BigInt(third.token)).toBeGreaterThan(BigInt(second.token));
      // ... and delivers the endpoint's heartbeats again
      const retaken = new Date();
      await until('heartbeats delivered by the publisher again', 60_000, async () => {
        const ids = (await sql<{ id: string }[]>`SELECT id FROM webhook_events WHERE type = 'heartbeat' AND created_at > ${retaken}`).map((r) => r.id);
        return ids.filter((id) => received.includes(id)).length >= 3 ? true : undefined;
      });

      // everything settled is certified, and the last head covers every entry
      await until('the backlog certified and signed', 120_000, async () => {
        const [r] = await sql<{ missing: number; signed: boolean }[]>`
          SELECT (SELECT count(*)::int FROM (
                    SELECT DISTINCT e.pair, e.bucket FROM candles_5m_by_exchange e
                    JOIN public_pairs p ON p.pair = e.pair JOIN pair_settlement s ON s.pair = e.pair
                    WHERE e.bucket + INTERVAL '5 minutes' <= s.settled_through
                      AND NOT EXISTS (SELECT 1 FROM certificates c WHERE c.pair = e.pair AND c.bucket = e.bucket)) m) AS missing,
                 (SELECT max(tree_size) FROM transparency_heads) = (SELECT count(*) FROM transparency_entries) AS signed`;
        return r!.missing === 0 && r!.signed ? true : undefined;
      });

      // what a monitor reads: today's heads from an API process, each over a larger tree than the one before
      const api = serve({ ...env, ROLE: 'api' });
      await api.heard('"API listening"');
      const url = (JSON.parse(api.log().split('\n').find((l) => l.includes('"API listening"'))!) as { url: string }).url;
      // health says who collects what and who publishes
      const health = (await (await fetch(`${url}/v1/health`)).json()) as { pipeline: { publisher: { pid: number } | null; processes: { pid: number; venues: string[]; publisher: boolean }[] } };
      expect(health.pipeline.publisher?.pid).toBe(publisher.proc.pid);
      expect(health.pipeline.processes.find((p) => p.pid === publisher.proc.pid)).toEqual(expect.objectContaining({ venues: publisher === a ? ['luno', 'binance'] : ['valr', 'quidax'], publisher: true }));
      expect(health.pipeline.processes.filter((p) => p.publisher).length).toBe(1);
      const day = new Date().toISOString().slice(0, 10);
      const answer = (await (await fetch(`${url}/v1/transparency/heads?date=${day}`)).json()) as { heads: { tree_size: number; timestamp: string }[] };
      const sizes = answer.heads.map((h) => h.tree_size);
      expect(sizes.length).toBeGreaterThan(1);
      expect(sizes, 'heads strictly increase').toEqual([...new Set(sizes)].sort((x, y) => x - y));
      const times = answer.heads.map((h) => h.timestamp);
      expect(times).toEqual([...times].sort());

      // no record stored twice: one log entry per certificate, fixing and restatement, one bundle each
      const [counts] = await sql<{ certificates: number; fixings: number; restatements: number; distinct_restatements: number; entries: number; distinct_entries: number; bundles: number }[]>`
        SELECT (SELECT count(*)::int FROM certificates) AS certificates,
               (SELECT count(*)::int FROM fixings) AS fixings,
               (SELECT count(*)::int FROM restatements) AS restatements,
               (SELECT count(*)::int FROM (SELECT DISTINCT pair, subject, time, restated FROM restatements) r) AS distinct_restatements,
               (SELECT count(*)::int FROM transparency_entries) AS entries,
               (SELECT count(DISTINCT entry_id)::int FROM transparency_entries) AS distinct_entries,
               (SELECT count(*)::int FROM bundles) AS bundles`;
      const c = counts!;
      expect(c.certificates).toBeGreaterThan(50);
      expect(c.entries).toBe(c.certificates + c.fixings + c.restatements);
      expect(c.distinct_entries).toBe(c.entries);
      expect(c.bundles).toBe(c.certificates + c.fixings);
      expect(c.distinct_restatements).toBe(c.restatements);

      // every heartbeat event is made once and has one delivery; none reached the receiver twice;
      // each was delivered, or is still leased by the process that was killed with it under way
      // (made again once the lease runs out: at least once)
      const events = await sql<{ id: string; deliveries: number; leased: boolean }[]>`
        SELECT e.id, (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries,
               EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.state = 'pending' AND d.next_attempt_at > now()) AS leased
        FROM webhook_events e WHERE e.type = 'heartbeat' ORDER BY e.created_at`;
      expect(events.every((e) => e.deliveries === 1)).toBe(true);
      expect(received.filter((id, i) => received.indexOf(id) !== i), 'no heartbeat delivered twice').toEqual([]);
      expect(received.length).toBeGreaterThan(0);
      expect(events.filter((e) => !received.includes(e.id) && !e.leased).map((e) => e.id), 'delivered, or leased for another try').toEqual([]);

      for (const p of [publisher, api]) {
        p.proc.kill('SIGTERM');
        expect(await p.exit).toBe(0);
      }
      // a stopped process leaves: its row is gone and its lease given up
      expect(await sql`SELECT pid FROM processes`).toEqual([expect.objectContaining({ pid: other.proc.pid })]); // the killed one, until its row ages out
      expect(await holder()).toBeUndefined();
    } finally {
      for (const p of started) {
        p.kill('SIGCONT');
        p.kill('SIGKILL');
      }
      await sql.end();
      receiver.close();
      await sim.stop();
      await fresh.drop();
    }
  }, 600_000);
});
