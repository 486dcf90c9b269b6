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
import { prng } from './rng.js';
import { FAULT_KINDS, type Fault, type FaultKind } from './types.js';

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

export class FaultBook {
  private readonly active = new Map<string, ActiveFault>();
  private readonly next: () => number;

  constructor(seed: number) {
    this.next = prng(seed ^ 0x5f3759df);
  }

  set(prefix: string, fault: Fault | null): void {
    if (fault === null) {
      this.active.delete(prefix);
      return;
    }
    if (!isFault(fault)) throw new Error(`not a fault: ${JSON.stringify(fault)}`);
    this.active.set(prefix, { kind: fault.kind, remaining: fault.times ?? Infinity });
  }

  get(prefix: string): Fault | null {
    const f = this.active.get(prefix);
    if (!f) return null;
    return f.remaining === Infinity ? { kind: f.kind } : { kind: f.kind, times: f.remaining };
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
