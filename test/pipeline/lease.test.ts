// The lease's fence handed on as a function of its own (as publishing steps get it): it still
// answers for its lease. The contest between processes is test/bin/publishers.test.ts (a server).
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Sql, Tx } from '../../lib/db/connect.js';
import { FencedOut, PublisherLease, processIdentity } from '../../pipeline/lease.js';

const lease = (sole: boolean) => new PublisherLease({ sql: null as unknown as Sql, log: pino({ level: 'silent' }), me: processIdentity('pipeline', [], 'test'), sole });
const tx = null as unknown as Tx; // neither fence below reaches the database

describe('the publisher lease', () => {
  it('fences out, handed on alone, while its process does not hold the lease', async () => {
    const { fence } = lease(false);
    await expect(fence(tx)).rejects.toBeInstanceOf(FencedOut);
  });

  it('fences nothing, handed on alone, in the only process there can be', async () => {
    const { fence } = lease(true);
    await expect(fence(tx)).resolves.toBeUndefined();
  });
});
