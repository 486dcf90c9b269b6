// A job that may be asked for again while it runs (a snapshot rebuild, a delivery pass, a probe of
// the replicas, a publish): calls meanwhile are folded into one more run after the current one, so
// every caller's request is served by a run that started after it, and an older run never finishes
// last over a newer one.

export class Coalesced<T> {
  private running: Promise<T> | null = null;
  private again = false;

  /** `keepGoing`: whether a folded run still goes ahead (false once the owner is stopping). */
  constructor(
    private readonly job: () => Promise<T>,
    private readonly keepGoing: () => boolean = () => true,
  ) {}

  /** Runs the job, or, while it runs, one more time after it; resolves with the last run's result. */
  run(): Promise<T> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let result: T;
        do {
          this.again = false;
          result = await this.job();
        } while (this.again && this.keepGoing());
        return result;
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** The run under way, or null. */
  get current(): Promise<T> | null {
    return this.running;
  }
}

/**
 * Asks for a coalesced job at most once every `spacingMs` (a burst of trades is one rebuild, not a
 * hundred): an ask meanwhile is served by the next run, which starts as soon as the spacing allows.
 * The spacing may be worked out at each ask (e.g. from how long the last run took).
 */
export class Paced {
  private timer: NodeJS.Timeout | null = null;
  private lastAt = 0;

  constructor(
    private readonly job: Coalesced<unknown>,
    private readonly spacingMs: number | (() => number),
    private readonly onError: (err: unknown) => void,
  ) {}

  ask(): void {
    if (this.timer) return;
    const spacing = typeof this.spacingMs === 'number' ? this.spacingMs : this.spacingMs();
    const wait = Math.max(0, this.lastAt + spacing - Date.now());
    this.timer = setTimeout(() => {
      this.timer = null;
      this.lastAt = Date.now();
      this.job.run().catch(this.onError);
    }, wait);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
