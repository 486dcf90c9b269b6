// Bulk work waits for requests in the foreground (lib/foreground.ts): a background step goes on at
// once when none is in flight, GRACE_MS after the last one leaves unless another comes, and never
// waits past MAX_WAIT_MS.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backgroundTurn, enterForeground, GRACE_MS, MAX_WAIT_MS } from '../../lib/foreground.js';

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return done;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('the foreground', () => {
  it('lets a background step go at once when no request is in it', async () => {
    expect(await settled(backgroundTurn())).toBe(true);
  });

  it('holds background steps while a request is in it, and lets them all go GRACE_MS after the last leaves', async () => {
    vi.useFakeTimers();
    const first = enterForeground();
    const second = enterForeground();
    const steps = [backgroundTurn(), backgroundTurn()];
    expect(await settled(steps[0]!)).toBe(false);
    first();
    first(); // leaving twice counts once
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(await settled(steps[0]!)).toBe(false);
    second();
    expect(await settled(steps[0]!)).toBe(false);
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(await settled(Promise.all(steps).then(() => {}))).toBe(true);
    expect(await settled(backgroundTurn())).toBe(true); // a step asking while none is in flight goes at once
  });

  it("keeps them held when the next request comes within GRACE_MS, as a customer's next one after another does", async () => {
    vi.useFakeTimers();
    let leave = enterForeground();
    const held = backgroundTurn();
    for (let i = 0; i < 3; i++) {
      leave();
      await vi.advanceTimersByTimeAsync(0);
      leave = enterForeground(); // the same customer's next request, in the gap
      await vi.advanceTimersByTimeAsync(GRACE_MS);
      expect(await settled(held)).toBe(false);
    }
    leave();
    await vi.advanceTimersByTimeAsync(GRACE_MS);
    expect(await settled(held)).toBe(true);
  });

  it('lets a step go after MAX_WAIT_MS under steady traffic, so a long answer still moves on', async () => {
    vi.useFakeTimers();
    const leave = enterForeground();
    const step = backgroundTurn();
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS - 1);
    expect(await settled(step)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(step)).toBe(true);
    leave();
  });
});
