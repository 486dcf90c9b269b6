// Each customer's share of an API process: at most TIER_RULES[tier].concurrent slots in flight at
// once, all its keys together (a customer's keys share its limits). A request takes one slot, a
// page of candles one per PAGE_SLOT_CANDLES candles it asks for (its work on this process's thread
// and database grows with its candles), at most the whole share, so a customer with nothing in
// flight can always start any request. A page of more than one slot is bulk work, one at a time per
// customer: two of them would keep both of a small machine's cores busy for every other customer,
// while one leaves room (bench/README.md, fairness), and the rest of the share stays for the
// customer's other requests. Past either, 429 rate_limit_exceeded with Retry-After, at once: a
// burst of heavy pages from one customer then queues nobody else's requests behind it
// (docs/decisions.md, "Each customer's share"). The refused are told to come back at the pace
// they can be taken, a share's worth of slots a second, and bulk pages one a second: told all at
// once to retry in a second, a hundred refused clients would come back together, and their
// refusals again hold up everyone's requests on the process's thread for tens of milliseconds
// every second.
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

/** What an owner holds: slots, the requests holding them, and how many of those are bulk pages. */
interface Held {
  slots: number;
  requests: number;
  bulkPages: number;
}

/** The longest a refused request is told to wait, in seconds. */
export const MAX_RETRY_AFTER_SECONDS = 60;

/** Why a request was refused: its owner's share is full, or it is a bulk page while another of the owner's is in flight. */
export type RefusedFor = 'share' | 'bulk';

/** Why a request was refused: what its owner holds, and what it asked for (capped at the share); when to retry. */
export interface Refused {
  readonly held: Readonly<Held>;
  readonly asked: number;
  readonly refusedFor: RefusedFor;
  /** Seconds to wait: 1, or later while the seconds before are taken by those refused before it (retryAfter below). */
  readonly retryAfter: number;
}

/**
 * Where an owner's refused requests of one kind are sent back: the second `first` and each one
 * after it takes `perSecond` of what they weigh; `sent` has been sent back so far.
 */
interface Returns {
  readonly first: number;
  readonly perSecond: number;
  sent: number;
}

/** Per owner, when its refused requests of one kind are told to come back. */
type Schedules = Map<string, Returns>;

/** `owner`'s schedule forgotten once every request on it is due back by `nowMs`. */
function forgetDue(schedules: Schedules, owner: string, nowMs: number): void {
  const r = schedules.get(owner);
  if (r && r.first + 1000 * Math.floor(r.sent / r.perSecond) < nowMs) schedules.delete(owner);
}

export class InFlight {
  private readonly held = new Map<string, Held>();
  /** Refused requests' schedules: those refused for a full share, and bulk pages refused for another in flight. */
  private readonly shareReturns: Schedules = new Map();
  private readonly bulkReturns: Schedules = new Map();

  constructor(private readonly now: () => number = Date.now) {}

  /** How many slots `owner` holds here. */
  count(owner: string): number {
    return this.held.get(owner)?.slots ?? 0;
  }

  /**
   * Takes `slots` of `owner`'s `share` (at most all of it) and returns its release (idempotent), or,
   * when they are not free, or it is a bulk page while another of the owner's is in flight, why not.
   * Refused bulk pages are sent back one a second (one runs at a time), other requests a share's
   * worth of slots a second, each kind on its own schedule.
   */
  enter(owner: string, slots: number, share: number, nowMs = this.now()): (() => void) | Refused {
    const asked = Math.min(Math.max(1, slots), share);
    const bulkPage = asked > 1;
    const held = this.held.get(owner) ?? { slots: 0, requests: 0, bulkPages: 0 };
    if (bulkPage && held.bulkPages > 0) return { held: { ...held }, asked, refusedFor: 'bulk', retryAfter: retryAfter(this.bulkReturns, owner, 1, 1, nowMs) };
    if (held.slots + asked > share) return { held: { ...held }, asked, refusedFor: 'share', retryAfter: retryAfter(this.shareReturns, owner, asked, share, nowMs) };
    forgetDue(this.shareReturns, owner, nowMs);
    forgetDue(this.bulkReturns, owner, nowMs);
    held.slots += asked;
    held.requests += 1;
    if (bulkPage) held.bulkPages += 1;
    this.held.set(owner, held);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      held.slots -= asked;
      held.requests -= 1;
      if (bulkPage) held.bulkPages -= 1;
      if (held.requests === 0) this.held.delete(owner);
    };
  }
}

/**
 * Seconds until `owner`'s refused request weighing `weight` is to come back on `schedules`: into
 * the first second from one second on with room (`perSecond`), those refused before it filling the
 * seconds before; at most a minute, a larger herd spread over the minute again.
 */
function retryAfter(schedules: Schedules, owner: string, weight: number, perSecond: number, nowMs: number): number {
  let r = schedules.get(owner);
  let seconds = r ? Math.round((r.first + 1000 * Math.floor(r.sent / perSecond) - nowMs) / 1000) : 0;
  // a schedule whose next second with room has come is done with, and so is a full minute's:
  // the next refused start another, a second's worth more in each second
  if (!r || seconds < 1 || seconds > MAX_RETRY_AFTER_SECONDS) {
    schedules.set(owner, (r = { first: nowMs + 1000, perSecond, sent: 0 }));
    seconds = 1;
  }
  r.sent += weight;
  return seconds;
}
