// Fault injection. A fault is set per prefix (a venue id, 'exchangerate-api' or 'coinbase') and
// affects that many requests (`times`, default: until cleared):
//   rate_limit    HTTP 429 with Retry-After (and the venue's own error body)
//   server_error  HTTP 500
//   timeout       never answer; the socket is held until the server stops
//   malformed     HTTP 200 with a broken JSON body
//   duplicates    trades responses repeat some of their trades
//   out_of_order  trades responses come shuffled
//   future        trades responses stamp their newest trade a day ahead (a venue's clock gone wrong)
//   silent        HTTP 200 with no trades (no rates, for the FX sources)
// The first four hit every request under the prefix; the others only requests that return
// trades (or rates), and only those count towards `times`.
//
// A venue's WebSocket streams (streams.ts; Luno, Binance and VALR) have faults of their own, kept
// in a second slot so a request fault and a stream fault can stand at once:
//   stream_drop    every open connection is cut (terminated: no close frame), and each new one as
//                  soon as it opens; `times` counts connections cut
//   stream_silent  every open connection, and each new one, goes silent for the rest of its life:
//                  no message, no ping or keep-alive, no answer to pings, yet never closed; `times`
//                  counts connections silenced
//   stream_burst   trades are held back, then sent all at once: when `times` trades are held
//                  (across the venue's pairs), or when the fault is cleared
//   stream_gap     a trade message is lost: Luno's message sequence skips its number, Binance's
//                  aggregate ids and VALR's trades simply miss it; `times` counts messages lost
// setFault(venue, null) and DELETE clear both slots.
import { prng } from './rng.js';
import { FAULT_KINDS, STREAM_FAULT_KINDS, type Fault, type FaultKind, type StreamFaultKind } from './types.js';

const DAY_MS = 86_400_000;

function isTrade(item: unknown): item is { time: number } {
  return typeof item === 'object' && item !== null && typeof (item as { time?: unknown }).time === 'number' && 'id' in item;
}

const EVERY_REQUEST: ReadonlySet<FaultKind> = new Set(['rate_limit', 'server_error', 'timeout', 'malformed']);

interface ActiveFault {
  kind: FaultKind;
  remaining: number;
}

export function isFault(value: unknown): value is Fault {
  if (typeof value !== 'object' || value === null) return false;
  const f = value as Record<string, unknown>;
  if (!FAULT_KINDS.includes(f.kind as FaultKind)) return false;
  return f.times === undefined || f.times === null || (Number.isInteger(f.times) && (f.times as number) > 0);
}

export function isStreamFaultKind(kind: FaultKind): kind is StreamFaultKind {
  return (STREAM_FAULT_KINDS as readonly string[]).includes(kind);
}

export class FaultBook {
  private readonly active = new Map<string, ActiveFault>();
  private readonly streams = new Map<string, ActiveFault>();
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed ^ 0x5f3759df);
  }

  /** Sets the fault in its slot (request or stream); null clears both. */
  set(prefix: string, fault: Fault | null): void {
    if (fault === null) {
      this.active.delete(prefix);
      this.streams.delete(prefix);
      return;
    }
    if (!isFault(fault)) throw new Error(`not a fault: ${JSON.stringify(fault)}`);
    (isStreamFaultKind(fault.kind) ? this.streams : this.active).set(prefix, { kind: fault.kind, remaining: fault.times ?? Infinity });
  }

  /** The request fault of a prefix. */
  get(prefix: string): Fault | null {
    return shown(this.active.get(prefix));
  }

  /** The stream fault of a venue. */
  getStream(prefix: string): Fault | null {
    return shown(this.streams.get(prefix));
  }

  /** Whether the venue's stream fault is `kind`, consuming `uses` of it when it is. */
  takeStream(prefix: string, kind: StreamFaultKind, uses = 1): boolean {
    const f = this.streams.get(prefix);
    if (!f || f.kind !== kind) return false;
    f.remaining -= uses;
    if (f.remaining <= 0) this.streams.delete(prefix);
    return true;
  }

  /** Ends the venue's stream fault if it is `kind`. */
  endStream(prefix: string, kind: StreamFaultKind): void {
    if (this.streams.get(prefix)?.kind === kind) this.streams.delete(prefix);
  }

  /** The request-level fault to apply to the next request under `prefix`, consuming one use. */
  takeRequestFault(prefix: string): FaultKind | undefined {
    const f = this.active.get(prefix);
    if (!f || !EVERY_REQUEST.has(f.kind)) return undefined;
    this.consume(prefix, f);
    return f.kind;
  }

  /**
   * Applies a data-level fault (duplicates, out_of_order, future, silent) to the items of one response,
   * consuming one use. Without such a fault the items come back unchanged.
   */
  shape<T>(prefix: string, items: T[]): T[] {
    const f = this.active.get(prefix);
    if (!f || EVERY_REQUEST.has(f.kind)) return items;
    this.consume(prefix, f);
    switch (f.kind) {
      case 'silent':
        return [];
      case 'duplicates': {
        const out: T[] = [];
        items.forEach((item, i) => {
          out.push(item);
          // Repeat about a fifth of the items, and always the first one.
          if (i === 0 || this.next() < 0.2) out.push(item);
        });
        return out;
      }
      case 'out_of_order': {
        const out = items.slice();
        for (let i = out.length - 1; i > 0; i--) {
          const j = Math.floor(this.next() * (i + 1));
          [out[i], out[j]] = [out[j]!, out[i]!];
        }
        // A shuffle can leave a short list as it was; make sure the order visibly changed.
        if (out.length > 1 && out.every((x, i) => x === items[i])) out.reverse();
        return out;
      }
      case 'future': {
        // the newest trade, a day ahead; rates (no trade time) pass unchanged
        const newest = items.reduce<number>((at, item, i) => (isTrade(item) && (at < 0 || item.time > (items[at] as { time: number }).time) ? i : at), -1);
        return newest < 0 ? items : items.map((item, i) => (i === newest ? { ...item, time: (item as { time: number }).time + DAY_MS } : item));
      }
      default:
        return items;
    }
  }

  private consume(prefix: string, f: ActiveFault): void {
    f.remaining -= 1;
    if (f.remaining <= 0) this.active.delete(prefix);
  }
}

function shown(f: ActiveFault | undefined): Fault | null {
  if (!f) return null;
  return f.remaining === Infinity ? { kind: f.kind } : { kind: f.kind, times: f.remaining };
}
