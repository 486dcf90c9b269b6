// Trade notices: the writer says which pairs it has just stored trades for, and every process that
// serves live rates hears it at once, whichever process wrote them. On a server that is
// PostgreSQL's NOTIFY on one channel, heard by LISTEN on a connection of each listener's own
// (postgres.js reconnects it); the embedded database admits one connection, so its one process
// (ROLE=all) hears its own writes in memory.
import { EventEmitter } from 'node:events';
import type { Sql } from './pool.js';

/** The channel every writer notifies on. */
const CHANNEL = 'afrates_trades';
/** A payload is at most 8,000 bytes: the pairs of one write fit many times over. */
const MAX_PAYLOAD = 7_000;

export interface TradeNotices {
  /** Tells every listener that trades of these pairs were stored (after they are committed). */
  announce(pairs: Iterable<string>): Promise<void>;
  /** Hears each announcement; returns the way to stop hearing. */
  listen(onPairs: (pairs: readonly string[]) => void): Promise<() => Promise<void>>;
}

export function tradeNotices(sql: Sql, kind: 'embedded' | 'server'): TradeNotices {
  return kind === 'server' ? serverNotices(sql) : memoryNotices();
}

function serverNotices(sql: Sql): TradeNotices {
  return {
    async announce(pairs) {
      const text = [...new Set(pairs)].join(',').slice(0, MAX_PAYLOAD);
      if (text) await sql`SELECT pg_notify(${CHANNEL}, ${text})`;
    },
    async listen(onPairs) {
      const { unlisten } = await sql.listen(CHANNEL, (payload) => onPairs(payload ? payload.split(',') : []));
      return unlisten;
    },
  };
}

function memoryNotices(): TradeNotices {
  const events = new EventEmitter();
  events.setMaxListeners(0);
  return {
    async announce(pairs) {
      const list = [...new Set(pairs)];
      if (list.length > 0) events.emit('trades', list);
    },
    async listen(onPairs) {
      events.on('trades', onPairs);
      return async () => void events.off('trades', onPairs);
    },
  };
}
