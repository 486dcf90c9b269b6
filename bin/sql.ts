// make sql: SQL on the service's database. The embedded database admits one connection at a time,
// which a running service holds, so this needs it stopped (make run or make demo; it says so in one
// line otherwise) and then opens the database itself, through its wire server, for psql (when
// installed) or, without psql, a plain prompt of its own. On a server (DATABASE_URL) it is psql
// against that server, beside the running service. Q="SELECT ..." runs one statement and prints
// its rows as JSON lines, for scripts.
import { spawn, spawnSync } from 'node:child_process';
import readline from 'node:readline';
import postgres from 'postgres';
import { startEmbedded } from '../lib/db/embedded/index.js';
import { configOrExit, openOrExplain } from './fail.js';

const config = configOrExit();
const query = process.env.Q?.trim() || undefined;
const embedded = config.databaseUrl ? null : await openOrExplain(() => startEmbedded(config.dataDir), 'sql');
const url = config.databaseUrl ?? embedded!.url;
let status = 0;
try {
  if (query) status = await runOne(url, query);
  else if (spawnSync('psql', ['--version'], { stdio: 'ignore' }).status === 0) status = await psql(url);
  else status = await prompt(url);
} finally {
  await embedded?.stop();
}
process.exit(status);

function psql(url: string): Promise<number> {
  return new Promise((resolve) => spawn('psql', [url], { stdio: 'inherit' }).on('exit', (code) => resolve(code ?? 1)));
}

async function runOne(url: string, text: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    for (const row of await sql.unsafe(text)) process.stdout.write(`${JSON.stringify(row)}\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return 1;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Statements ending in `;`, one at a time, rows as a table; \q or end of input leaves. */
async function prompt(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, prompt: 'afrates=> ' });
  process.stdout.write(`connected to the ${embedded ? `embedded database ${config.dataDir}` : 'server'} (psql not found: a plain prompt; end statements with ;, \\q leaves)\n`);
  rl.prompt();
  let pending = '';
  for await (const line of rl) {
    if (line.trim() === '\\q') break;
    pending += `${line}\n`;
    if (!line.trim().endsWith(';')) {
      rl.prompt();
      continue;
    }
    try {
      const rows = await sql.unsafe(pending);
      if (rows.length) console.table(rows);
      process.stdout.write(`(${rows.count ?? rows.length} ${rows.command ?? ''})\n`);
    } catch (err) {
      process.stdout.write(`error: ${(err as Error).message}\n`);
    }
    pending = '';
    rl.prompt();
  }
  rl.close();
  await sql.end({ timeout: 5 });
  return 0;
}
