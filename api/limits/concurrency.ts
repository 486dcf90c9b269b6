// Each customer's share of an API process: at most TIER_RULES[tier].concurrent slots in flight at
// once, all its keys together (a customer's keys share its limits). A request takes one slot, a
// page of candles one per PAGE_SLOT_CANDLES candles it asks for (its work on this process's thread
// and database grows with its candles), at most the whole share, so a customer with nothing in
// flight can always start any request. Past the share, 429 rate_limit_exceeded with Retry-After, at
// once: a burst of heavy pages from one customer then queues nobody else's requests behind it
// (docs/decisions.md, "Each customer's share").
// Per process, not in Redis: what is shared out is this process's (its event loop, its database
// connections), and a count in Redis would outlive a process that died holding slots.
// The middleware that takes a request's slots: api/middleware/concurrency.ts.
import { TIER_RULES } from '../../lib/tiers.js';

/**
 * The candles a page may ask for in one slot: Builder's largest page, so every page up to it (the
 * dashboard's chart asks for up to 2,000 beside its other requests) counts as one request, and an
 * Enterprise 10,000-candle page as four.
 */
export const PAGE_SLOT_CANDLES = TIER_RULES.builder.maxPage;

/** The slots a page of `candles` candles takes: one per PAGE_SLOT_CANDLES, at least one. */
export function pageSlots(candles: number): number {
  return Number.isFinite(candles) && candles > PAGE_SLOT_CANDLES ? Math.ceil(candles / PAGE_SLOT_CANDLES) : 1;
}

/** What an owner holds: slots, and the requests holding them. */
interface Held {
  slots: number;
  requests: number;
}

/** Why a request was refused: what its owner holds, and what it asked for (capped at the share). */
export interface Refused {
  readonly held: Readonly<Held>;
  readonly asked: number;
}

export class InFlight {
  private readonly held = new Map<string, Held>();

  /** How many slots `owner` holds here. */
  count(owner: string): number {
    return this.held.get(owner)?.slots ?? 0;
  }

  /**
   * Takes `slots` of `owner`'s `share` (at most all of it) and returns its release (idempotent), or,
   * when they are not free, why not.
   */
  enter(owner: string, slots: number, share: number): (() => void) | Refused {
    const asked = Math.min(Math.max(1, slots), share);
    const held = this.held.get(owner) ?? { slots: 0, requests: 0 };
    if (held.slots + asked > share) return { held: { ...held }, asked };
    held.slots += asked;
    held.requests += 1;
    this.held.set(owner, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.slots -= asked;
      held.requests -= 1;
      if (held.requests === 0) this.held.delete(owner);
    };
  }
}
