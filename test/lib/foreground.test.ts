// Bulk work waits for requests in the foreground (lib/foreground.ts): a background step goes on at
// once when none is in flight, when the last one leaves, and never waits past MAX_WAIT_MS.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { backgroundTurn, enterForeground, MAX_WAIT_MS } from '../../lib/foreground.js';

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

  it('holds background steps while a request is in it, and lets them all go when the last leaves', async () => {
    const first = enterForeground();
    const second = enterForeground();
    const steps = [backgroundTurn(), backgroundTurn()];
    expect(await settled(steps[0]!)).toBe(false);
    first();
    first(); // leaving twice counts once
    expect(await settled(steps[0]!)).toBe(false);
    second();
    expect(await settled(Promise.all(steps).then(() => {}))).toBe(true);
    expect(await settled(backgroundTurn())).toBe(true);
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
