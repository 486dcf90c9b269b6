// Loopback-only admin endpoint for key management while the service runs: the embedded database
// admits one connection, held by the service, so `make key` talks to the service instead.
// Guarded by a random token the process writes to var/admin.json (mode 0600) and removes on stop.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../lib/log.js';
import type { Sql } from '../../lib/db/connect.js';
import { KeyStore } from '../keys/store.js';
import { TIERS, type Tier } from '../../lib/tiers.js';
import { isCustomerName, isEmail } from '../validate.js';

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
    // an operator's values (NAME at most 200 characters) fit many times over
    if (text.length > 4096) throw new KeyCommandError('the values given are too long (NAME at most 200 characters)');
  }
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** A key command's refusal, worded for the operator (one line, the way out in it). */
export class KeyCommandError extends Error {}

function keyId(args: Record<string, unknown>, command: string): number {
  const raw = String(args.id ?? '').trim();
  if (!/^\d{1,15}$/.test(raw)) throw new KeyCommandError(`ID is required, a key's number: make ${command} ID=12 (make keys lists them)`);
  return Number(raw);
}

/** A key command with its values checked: what runKeyCommand does. */
export type KeyCommand =
  | { readonly command: 'create'; readonly tier: Tier; readonly email: string | null; readonly name: string | null }
  | { readonly command: 'list' }
  | { readonly command: 'revoke' | 'rotate'; readonly id: number };

/**
 * The command and its values checked before anything is opened: an operator's mistake is answered
 * at once, the same whether the command goes through the running service or to the database.
 */
export function checkKeyCommand(command: string, args: Record<string, unknown>): KeyCommand {
  switch (command) {
    case 'create': {
      const tier = String(args.tier ?? '');
      if (!TIERS.includes(tier as Tier)) throw new KeyCommandError(`TIER must be one of ${TIERS.join(', ')}`);
      const email = String(args.email ?? '').trim() || null;
      if (email !== null && !isEmail(email)) throw new KeyCommandError(`EMAIL is not an email address: ${email.slice(0, 100)}`);
      const name = String(args.name ?? '').trim() || null;
      if (name !== null && !isCustomerName(name)) throw new KeyCommandError('NAME must be at most 200 characters, without control characters');
      return { command, tier: tier as Tier, email, name };
    }
    case 'list':
      return { command };
    case 'revoke':
    case 'rotate':
      return { command, id: keyId(args, command) };
    default:
      throw new KeyCommandError(`unknown command ${command}: create, list, revoke or rotate`);
  }
}

/** A checked key command run on the database itself: bin/key.ts while no service holds it. */
export function runKeyCommandOn(sql: Sql, c: KeyCommand): Promise<unknown> {
  return runKeyCommand(new KeyStore(sql), c);
}

/** The operations the admin endpoint and the direct-database fallback of bin/key.ts share. */
export async function runKeyCommand(keys: KeyStore, c: KeyCommand): Promise<unknown> {
  switch (c.command) {
    case 'create':
      try {
        const { apiKey, record } = await keys.issue({ tier: c.tier, customerName: c.name, email: c.email });
        return { api_key: apiKey, record };
      } catch (err) {
        if ((err as { code?: string }).code !== '23505') throw err;
        const existing = c.email ? await keys.activeFreeKey(c.email) : null;
        throw new KeyCommandError(`${c.email} already has an active free key${existing ? ` (id ${existing.id})` : ''}: one per email; make rotate ID=... replaces it`);
      }
    case 'list':
      return { keys: await keys.list() };
    case 'revoke': {
      const record = await keys.revoke(c.id);
      if (!record) throw new KeyCommandError(`no active key with id ${c.id} (make keys lists them)`);
      return { record };
    }
    case 'rotate': {
      const rotated = await keys.rotate(c.id);
      if (!rotated) throw new KeyCommandError(`no active key with id ${c.id} (make keys lists them)`);
      return { api_key: rotated.apiKey, record: rotated.record };
    }
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
      send(200, await runKeyCommand(keys, checkKeyCommand(match[1]!, await readJson(req))));
    } catch (err) {
      // the operator's mistakes are worded for them; anything else is logged here, not echoed
      if (err instanceof KeyCommandError) return send(400, { error: err.message });
      log.error({ err }, 'key command failed');
      send(500, { error: 'the key command failed; the service log says why' });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new Error(`ADMIN_PORT ${port} is taken on 127.0.0.1: pick another, or leave ADMIN_PORT unset (any free port)`) : err),
    );
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
