// A job asked for again while it runs: one more run after it, whatever the number of calls, and
// every caller gets a result made after its call.
import { describe, expect, it } from 'vitest';
import { Coalesced } from '../../lib/coalesced.js';

/** A job whose runs finish when the test says. */
function gatedJob() {
  const gates: Array<() => void> = [];
  let runs = 0;
  const job = () => new Promise<number>((resolve) => gates.push(() => resolve(++runs)));
  return { job, open: () => gates.shift()!(), started: () => gates.length + runs, runs: () => runs };
}

describe('Coalesced', () => {
  it('folds every call made during a run into one more run, and answers them all with its result', async () => {
    const g = gatedJob();
    const c = new Coalesced(g.job);
    const first = c.run();
    const during = [c.run(), c.run(), c.run()];
    g.open(); // the first run ends; the folded one starts
    await Promise.resolve();
    await new Promise((r) => setImmediate(r));
    expect(g.started()).toBe(2);
    g.open();
    expect(await Promise.all([first, ...during])).toEqual([2, 2, 2, 2]);
    expect(g.runs()).toBe(2);
    expect(c.current).toBeNull();
  });

  it('runs no folded run once its owner stops', async () => {
    const g = gatedJob();
    let going = true;
    const c = new Coalesced(g.job, () => going);
    const first = c.run();
    void c.run();
    going = false;
    g.open();
    expect(await first).toBe(1);
    expect(g.runs()).toBe(1);
  });
});
