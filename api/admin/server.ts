// Loopback-only admin endpoint for key management while the service runs: the embedded database
// admits one connection, held by the service, so `make key` talks to the service instead.
// Guarded by a random token the process writes to var/admin.json (mode 0600) and removes on stop.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../lib/log.js';
import type { KeyStore } from '../keys/store.js';
import { TIERS, type Tier } from '../tiers.js';

export interface AdminHandle {
  readonly url: string;
  close(): Promise<void>;
}

export interface AdminFile {
  readonly url: string;
  readonly token: string;
  readonly pid: number;
}

export const adminFile = (varDir: string) => path.join(varDir, 'admin.json');

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) {
    text += chunk;
    if (text.length > 4096) throw new Error('body too large');
  }
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The operations the admin endpoint and the direct-database fallback of bin/key.ts share. */
export async function runKeyCommand(keys: KeyStore, command: string, args: Record<string, unknown>): Promise<unknown> {
  switch (command) {
    case 'create': {
      const tier = String(args.tier ?? '');
      if (!TIERS.includes(tier as Tier)) throw new Error(`TIER must be one of ${TIERS.join(', ')}`);
      const { apiKey, record } = await keys.issue({ tier: tier as Tier, customerName: (args.name as string) || null, email: (args.email as string) || null });
      return { api_key: apiKey, record };
    }
    case 'list':
      return { keys: await keys.list() };
    case 'revoke': {
      const record = await keys.revoke(Number(args.id));
      if (!record) throw new Error(`no active key with id ${String(args.id)}`);
      return { record };
    }
    case 'rotate': {
      const rotated = await keys.rotate(Number(args.id));
      if (!rotated) throw new Error(`no active key with id ${String(args.id)}`);
      return { api_key: rotated.apiKey, record: rotated.record };
    }
    default:
      throw new Error(`unknown command ${command}`);
  }
}

export async function startAdmin(keys: KeyStore, varDir: string, port: number, log: Logger): Promise<AdminHandle> {
  const token = crypto.randomBytes(32).toString('hex');
  const expected = crypto.createHash('sha256').update(`Bearer ${token}`).digest();
  const server = http.createServer(async (req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const given = crypto.createHash('sha256').update(req.headers.authorization ?? '').digest();
    if (!crypto.timingSafeEqual(given, expected)) return send(401, { error: 'unauthorized' });
    const match = /^\/admin\/keys\/(create|list|revoke|rotate)$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return send(404, { error: 'not_found' });
    try {
      send(200, await runKeyCommand(keys, match[1]!, await readJson(req)));
    } catch (err) {
      send(400, { error: (err as Error).message });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const file = adminFile(varDir);
  fs.mkdirSync(varDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ url, token, pid: process.pid } satisfies AdminFile), { mode: 0o600 });
  log.info({ url }, 'admin endpoint listening (loopback only)');
  return {
    url,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      try {
        const current = JSON.parse(fs.readFileSync(file, 'utf8')) as AdminFile;
        if (current.pid === process.pid) fs.rmSync(file, { force: true });
      } catch {
        /* already gone */
      }
    },
  };
}
