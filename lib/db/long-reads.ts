// How the statements of long reads (a page of candles, a CSV page, a month's file: read a bounded
// number of rows at a time, api/queries/candles.ts candleChunks) share a pool with everything else.
// A connection answers its statements in the order they were sent, and the embedded database has
// one: left alone, a small statement of one customer waits behind every chunk the long reads in
// flight have sent, whoever they belong to. So a long read's statements after its first are sent
// only in their turn: at most half the pool's connections (the embedded database's one) run them
// at once, the others wait here in the order they asked, and every other statement (a read's
// first among them) is sent at once, waiting behind at most those in flight. A reader has at most
// one statement waiting (its next chunk), so the readers take turns, statement by statement
// (docs/decisions.md, "Long reads take turns on the database"). Before its turn, each waits while
// a request is in the foreground (lib/foreground.ts).
import { backgroundTurn } from '../foreground.js';
import type { Sql } from './pool.js';

interface Turns {
  /** long reads' statements sent and not yet answered */
  running: number;
  readonly limit: number;
  /** those waiting for their turn, first asked first */
  readonly waiting: (() => void)[];
}

const turns = new WeakMap<object, Turns>();

/** Long reads' statements a pool of `connections` runs at once: half of them, at least one. */
export function longReadsAtOnce(connections: number): number {
  return Math.max(1, Math.floor(connections / 2));
}

/** The connections of `sql`'s pool (postgres.js's `max`). */
function poolSize(sql: Sql): number {
  const max = Number((sql as unknown as { options?: { max?: unknown } }).options?.max);
  return Number.isFinite(max) && max > 0 ? max : 1;
}

function turnsOf(sql: Sql): Turns {
  let t = turns.get(sql);
  if (!t) {
    t = { running: 0, limit: longReadsAtOnce(poolSize(sql)), waiting: [] };
    turns.set(sql, t);
  }
  return t;
}

/**
 * A long read's statement, made and sent by `statement` when its turn on `sql`'s pool comes (the
 * statement is made only then: postgres.js sends a query when it is first awaited).
 */
export async function longReadStatement<T>(sql: Sql, statement: () => PromiseLike<T>): Promise<T> {
  await backgroundTurn();
  const t = turnsOf(sql);
  if (t.running >= t.limit) await new Promise<void>((resolve) => t.waiting.push(resolve));
  else t.running++;
  try {
    return await statement();
  } finally {
    // the turn passes straight to the next one waiting (running stays counted for it)
    const next = t.waiting.shift();
    if (next) next();
    else t.running--;
  }
}
