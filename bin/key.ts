// make key / keys / revoke / rotate. Goes through the running service's loopback admin endpoint
// when there is one (var/admin.json), else straight to the database. A new key is printed alone on
// stdout (so scripts can capture it); everything else goes to stderr.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../lib/db/connect.js';
import { createLogger } from '../lib/log.js';
import { adminFile, checkKeyCommand, KeyCommandError, runKeyCommandOn, type AdminFile, type KeyCommand } from '../api/admin/server.js';
import { configOrExit, openOrExplain } from './fail.js';

function parsed() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { tier: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' }, id: { type: 'string' } },
    });
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message.split('\n')[0]}\n`);
    process.exit(1);
  }
}
const { positionals, values } = parsed();
const command = positionals[0] ?? 'list';
const args = { tier: values.tier, name: values.name, email: values.email, id: values.id };
const config = configOrExit();
const log = createLogger('warn', {}, 2); // stdout is the key's alone

async function viaService(): Promise<unknown | undefined> {
  let admin: AdminFile;
  try {
    admin = JSON.parse(fs.readFileSync(adminFile(config.varDir), 'utf8')) as AdminFile;
  } catch {
    return undefined;
  }
  let res: Response;
  try {
    res = await fetch(`${admin.url}/admin/keys/${command}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${admin.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(args),
    });
  } catch {
    return undefined; // stale file: the service is gone
  }
  const body = (await res.json()) as { error?: string };
  if (!res.ok) throw new Error(body.error ?? `admin endpoint answered ${res.status}`);
  return body;
}

async function direct(checked: KeyCommand): Promise<unknown> {
  // make demo keeps its state in var/demo, beside make run's var: a key made here is not the demo's
  const demoDir = path.join(config.varDir, 'demo');
  if (config.databaseUrl === undefined && fs.existsSync(adminFile(demoDir))) {
    process.stderr.write('note: make demo is running with keys of its own; this acts on make run\'s (add DEMO=1 for the demo\'s)\n');
  }
  if (config.databaseUrl === undefined && !fs.existsSync(config.dataDir)) {
    // nothing to read: say where we looked rather than create an empty database there
    const demo = fs.existsSync(path.join(demoDir, 'db')) ? ' (make demo keeps its own: add DEMO=1)' : '';
    throw new KeyCommandError(`no database at ${config.dataDir}: start the service once with make run${demo}`);
  }
  const db = await openOrExplain(() => openDatabase(config, log), `make ${command === 'create' ? 'key' : command}`);
  try {
    return await runKeyCommandOn(db.sql, checked);
  } finally {
    await db.close();
  }
}

function print(result: unknown) {
  const r = result as { api_key?: string; record?: Record<string, unknown>; keys?: Record<string, unknown>[] };
  if (r.keys) {
    process.stdout.write('id\tprefix\ttier\tcustomer\temail\tstate\n');
    for (const k of r.keys) {
      process.stdout.write(`${k.id}\t${k.prefix}…\t${k.tier}\t${k.customer_name ?? ''}\t${k.email ?? ''}\t${k.revoked_at ? `revoked ${new Date(k.revoked_at as string | Date).toISOString()}` : 'active'}\n`);
    }
    return;
  }
  if (r.record) process.stderr.write(`key ${r.record.id} (${r.record.tier}${r.record.customer_name ? `, ${r.record.customer_name}` : ''})${r.record.revoked_at ? ' revoked' : ''}\n`);
  if (r.api_key) {
    process.stderr.write('Store this key now; it is not kept and cannot be shown again:\n');
    process.stdout.write(`${r.api_key}\n`);
  }
}

try {
  // a mistake answered before the service or the database is asked
  const checked = checkKeyCommand(command, args);
  print((await viaService()) ?? (await direct(checked)));
} catch (err) {
  // one line: the operator's mistakes are worded for them, anything else says only what failed
  process.stderr.write(`error: ${err instanceof KeyCommandError || err instanceof Error ? (err as Error).message.split('\n')[0] : String(err)}\n`);
  process.exitCode = 1;
}
