import { describe, expect, it } from 'vitest';
import type { Sql } from '../../../lib/db/connect.js';
import { longReadsAtOnce, longReadStatement } from '../../../lib/db/long-reads.js';
import { createPool } from '../../../lib/db/pool.js';

/** A pool as long-reads.ts sees it: only its size. */
const pool = (max: number) => ({ options: { max } }) as unknown as Sql;

describe('long reads on a pool', () => {
  it('run half the connections at once, at least one', () => {
    expect(longReadsAtOnce(1)).toBe(1);
    expect(longReadsAtOnce(10)).toBe(5);
  });

  it('take turns on the one connection, first asked first, and pass the turn on after a failure', async () => {
    const sql = pool(1);
    const order: string[] = [];
    const finish: Record<string, () => void> = {};
    const statement = (name: string, fail = false) =>
      longReadStatement(sql, () => {
        order.push(`start ${name}`);
        return new Promise<string>((resolve, reject) => (finish[name] = () => (fail ? reject(new Error(name)) : resolve(name))));
      });
    const a = statement('a', true);
    const b = statement('b');
    const c = statement('c');
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual(['start a']); // b and c are not made (nor sent) until their turn
    finish.a!();
    await expect(a).rejects.toThrow('a');
    expect(order).toEqual(['start a', 'start b']);
    finish.b!();
    await expect(b).resolves.toBe('b');
    finish.c!();
    await expect(c).resolves.toBe('c');
    expect(order).toEqual(['start a', 'start b', 'start c']);
    // the turns are free again: the next statement is made at once
    const d = longReadStatement(sql, async () => 'd');
    await expect(d).resolves.toBe('d');
  });

  it("read a server pool's own size: a pool of 10 runs 5 at once", async () => {
    // a pool as the service makes one (nothing is connected until a statement is sent)
    const sql = createPool('postgres://nobody@127.0.0.1:9/none', 10);
    try {
      let started = 0;
      const finish: (() => void)[] = [];
      const reads = Array.from({ length: 6 }, () =>
        longReadStatement(sql, () => {
          started++;
          return new Promise<void>((resolve) => finish.push(resolve));
        }),
      );
      await new Promise((resolve) => setImmediate(resolve));
      expect(started).toBe(5);
      finish.shift()!();
      await reads[0];
      expect(started).toBe(6);
      for (const f of finish) f();
      await Promise.all(reads);
    } finally {
      await sql.end({ timeout: 0 });
    }
  });
});
