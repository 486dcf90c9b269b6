// Each customer's share of an API process: at most TIER_RULES[tier].concurrent of its requests in
// flight at once, all its keys together (a customer's keys share its limits). Past it, 429
// rate_limit_exceeded with Retry-After, at once: a burst of heavy pages from one customer then
// queues nobody else's requests behind it (docs/decisions.md, "Each customer's share").
// Per process, not in Redis: what is shared out is this process's (its event loop, its database
// connections), and a count in Redis would outlive a process that died holding slots.
// The middleware that takes a request's slot: api/middleware/concurrency.ts.
import type { ApiError } from '../errors.js';

export class InFlight {
  private readonly counts = new Map<string, number>();

  /** How many requests `owner` has in flight here. */
  count(owner: string): number {
    return this.counts.get(owner) ?? 0;
  }

  /** Takes one of `owner`'s `share` slots and returns its release (idempotent); throws 429 when all are taken. */
  enter(owner: string, share: number, refusal: () => ApiError): () => void {
    const n = this.count(owner);
    if (n >= share) throw refusal();
    this.counts.set(owner, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(owner) - 1;
      if (left > 0) this.counts.set(owner, left);
      else this.counts.delete(owner);
    };
  }
}
