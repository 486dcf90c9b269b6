// Run by test/lib/db/connect.test.ts in a process of its own (Node's default for an unhandled
// rejection is to end the process, which vitest's own handler would hide): a pool whose every
// statement, postgres.js's array-type query on connecting included, outlasts a 1 ms timeout.
// Prints 'alive' if the process outlived the failed connection.
import { createPool } from '../../lib/db/connect.js';

const pool = createPool(process.argv[2]!, 2, 1);
const answer = await pool`SELECT pg_sleep(0.05)`.catch((err: { code?: string }) => err.code);
await new Promise((r) => setTimeout(r, 300));
console.log(JSON.stringify({ answer, alive: true }));
await pool.end();
