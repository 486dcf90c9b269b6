// The newest rate of every public pair, held in memory: what the API serves and the webhook alerts
// watch. The pipeline calls refresh() after each ingest cycle (or, in a process without the
// pipeline, follow() notices new cycles), so a live or markets request never queries the database.
// What depends on the clock (age, quality, status, confidence) is worked out when read
// (lib/live/assess.ts, api/live/present.ts).
import { EventEmitter } from 'node:events';
import { Coalesced, Paced } from '../coalesced.js';
import type { TradeNotices } from '../db/notices.js';
import type { Sql } from '../db/connect.js';
import type { Logger } from '../log.js';
import { primaryWalPosition, type WalFence } from '../db/replicas.js';
import { latestCycleId, latestMarket, latestRestatementId, listedMarkets, liveSources, publicPairs, syntheticAt, type SyntheticRow } from './queries.js';
import * as x from '../methodology/exact.js';
import type { Rational } from '../methodology/exact.js';
import { combineVenues, publishedRate, STALE_SECONDS, vwapOf, type ExclusionReason } from '../methodology/rules.js';

/** One venue's newest 5-minute candle: its VWAP and sums, exact. */
export interface SourceQuote {
  readonly exchange: string;
  /** its VWAP as published (rate_significant_digits), for display */
  readonly price: number;
  readonly vwap: Rational;
  readonly pv: Rational;
  readonly volume: Rational;
  readonly trades: number;
  readonly lastTradeAt: Date;
}

export interface LiveEntry {
  readonly pair: string;
  readonly base: string;
  readonly quote: string;
  /** the published rate (exact, rounded by the methodology), as a number and as its decimal text */
  readonly rate: number;
  readonly rateText: string;
  readonly exactRate: Rational;
  readonly calculation: 'vwap' | 'synthetic';
  /** Sources that went into the rate, with their share of the volume. */
  readonly used: readonly (SourceQuote & { weight: number })[];
  /** Venues listed for the pair that did not enter, and why. */
  readonly excluded: readonly { readonly exchange: string; readonly reason: ExclusionReason }[];
  /** Time of the newest data behind the rate. */
  readonly time: Date;
  readonly synthetic: { readonly price: number; readonly exact: Rational; readonly time: Date; readonly fxStale: boolean } | null;
}

/**
 * The least time between two rebuilds asked for by trade notices: a rate and its push follow a
 * stored trade within this plus one rebuild, and a flood of trades costs at most five rebuilds a
 * second. A rebuild slower than half of it spaces them to twice its time, so trades never keep the
 * database busy with rebuilds more than a third of the time (the embedded database has one
 * connection for everything).
 */
export const PUSH_SPACING_MS = 200;

export interface SnapshotOptions {
  readonly now?: () => Date;
  /**
   * Read replicas (lib/db/replicas.ts): told the primary's WAL position after each rebuild has read
   * its inputs and before its rates are served, so no replica serves a read older than them.
   */
  readonly fence?: WalFence;
  /**
   * Restatements recorded after an id, oldest first: given (the API's streams), each rebuild emits
   * those recorded since the previous one.
   */
  readonly restatementsAfter?: (sql: Sql, after: string) => Promise<readonly { readonly id: string }[]>;
}

export class LiveSnapshot {
  private entries = new Map<string, LiveEntry>();
  private pairs: { pair: string; base: string; quote: string }[] = [];
  /** pair|exchange currently left out as outliers; they return below half the limit (no flapping). */
  private readonly outliers = new Set<string>();
  private lastCycle: string | null = null;
  /** The newest restatement seen (null before the first rebuild: those already recorded are not news). */
  private lastRestatement: string | null = null;
  private followTimer: NodeJS.Timeout | undefined;
  /** Where the newest recorded cycle's data came from: simulated data is labelled on every response. */
  market: 'real' | 'simulated' | null = null;
  private readonly now: () => Date;
  private readonly fence: WalFence | undefined;
  private readonly restatementsAfter: SnapshotOptions['restatementsAfter'];
  /**
   * Emits 'refreshed' (with `version`) after every rebuild: the event streams push from it
   * (api/sse.ts); and 'restatements' (the rows) when a rebuild finds restatements recorded since the
   * previous one.
   */
  readonly events = new EventEmitter();
  /** Grows with every rebuild (its time in ms, or one more): the event id of the streams. 0 before the first. */
  version = 0;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    opts: SnapshotOptions = {},
  ) {
    this.now = opts.now ?? (() => new Date());
    this.fence = opts.fence;
    this.restatementsAfter = opts.restatementsAfter;
  }

  get(pair: string): LiveEntry | undefined {
    return this.entries.get(pair);
  }

  all(): LiveEntry[] {
    return [...this.entries.values()];
  }

  private readonly rebuilds = new Coalesced(() => this.build());

  /**
   * Rebuilds the snapshot. Calls while one runs are folded into one more run after it, so an older
   * build can never finish last and overwrite a newer one.
   */
  refresh(): Promise<void> {
    return this.rebuilds.run();
  }

  /** How long the last rebuild took (ms): rebuilds on trade notices are spaced by it. */
  private lastBuildMs = 0;

  private async build(): Promise<void> {
    const started = performance.now();
    try {
      await this.rebuild();
    } finally {
      this.lastBuildMs = performance.now() - started;
    }
  }

  private async rebuild(): Promise<void> {
    const now = this.now();
    if (this.pairs.length === 0) {
      this.pairs = await publicPairs(this.sql);
    }
    const sources = await liveSources(this.sql, now);
    const listed = await listedMarkets(this.sql);
    const synthetic = await syntheticAt(this.sql, now);
    const market = await latestMarket(this.sql);
    const restated = await this.newRestatements();
    if (this.fence) {
      // everything read above committed before this position: replicas must have replayed it
      this.fence.advance(await primaryWalPosition(this.sql));
    }
    this.market = market ?? null;
    const byPair = new Map<string, SourceQuote[]>();
    for (const s of sources) {
      const list = byPair.get(s.pair) ?? [];
      const pv = x.parseDecimal(s.pv);
      const volume = x.parseDecimal(s.volume);
      const vwap = vwapOf({ pv, volume });
      list.push({ exchange: s.exchange, price: Number(publishedRate(vwap)), vwap, pv, volume, trades: Number(s.trades), lastTradeAt: s.last_trade_at });
      byPair.set(s.pair, list);
    }
    const listedByPair = new Map<string, string[]>();
    for (const l of listed) listedByPair.set(l.pair, [...(listedByPair.get(l.pair) ?? []), l.exchange]);
    const synByPair = new Map(synthetic.map((s) => [s.pair, s]));
    const next = new Map<string, LiveEntry>();
    for (const p of this.pairs) {
      const entry = this.combine(p, byPair.get(p.pair) ?? [], listedByPair.get(p.pair) ?? [], synByPair.get(p.pair), now);
      if (entry) next.set(p.pair, entry);
    }
    this.entries = next;
    this.version = Math.max(this.version + 1, now.getTime());
    this.events.emit('refreshed', this.version);
    if (restated.length > 0) {
      this.lastRestatement = restated.at(-1)!.id;
      this.events.emit('restatements', restated);
    }
  }

  private combine(p: { pair: string; base: string; quote: string }, all: SourceQuote[], listed: readonly string[], syn: SyntheticRow | undefined, now: Date): LiveEntry | null {
    const synthetic =
      syn?.price != null
        ? {
            price: Number(publishedRate(x.parseDecimal(syn.price))),
            exact: x.parseDecimal(syn.price),
            // as old as its crypto leg: FX is collected hourly (FX_CYCLE_SECONDS) and judged by its
            // own rule (fx_fresh_hours, else fx_stale); counted in the age, it would take every
            // synthetic-only pair out of live at the end of each FX hour
            time: syn.usd_price_at!,
            fxStale: (syn.fx_fresh_sources ?? 0) === 0,
          }
        : null;
    // Within the last stale_seconds if any venue traded then; otherwise whatever the live window holds.
    const recent = all.filter((s) => now.getTime() - s.lastTradeAt.getTime() <= STALE_SECONDS * 1000);
    const candidates = recent.length > 0 ? recent : all;
    const combined = combineVenues(candidates, (s) => this.outliers.has(`${p.pair}|${s.exchange}`));
    this.rememberOutliers(p.pair, candidates, combined.excluded);
    const excluded = [
      ...combined.excluded.map((s) => ({ exchange: s.exchange, reason: 'outlier' as const })),
      ...all.filter((s) => !candidates.includes(s)).map((s) => ({ exchange: s.exchange, reason: 'stale' as const })),
      ...listed.filter((e) => !all.some((s) => s.exchange === e)).map((exchange) => ({ exchange, reason: 'no_trades' as const })),
    ].sort((a, b) => (a.exchange < b.exchange ? -1 : 1));
    if (combined.rate) {
      const rateText = publishedRate(combined.rate);
      return {
        ...p,
        rate: Number(rateText),
        rateText,
        exactRate: combined.rate,
        calculation: 'vwap',
        used: combined.used.map((s) => ({ ...s, weight: x.toNumber(x.div(s.volume, combined.volume), 12) })),
        excluded,
        time: new Date(Math.max(...combined.used.map((s) => s.lastTradeAt.getTime()))),
        synthetic,
      };
    }
    if (!synthetic) return null;
    const rateText = publishedRate(synthetic.exact);
    return { ...p, rate: Number(rateText), rateText, exactRate: synthetic.exact, calculation: 'synthetic', used: [], excluded, time: synthetic.time, synthetic };
  }

  /** Who is out as an outlier, kept between refreshes: a venue left out returns below half the limit. */
  private rememberOutliers(pair: string, sources: readonly SourceQuote[], out: readonly SourceQuote[]): void {
    const key = (s: SourceQuote) => `${pair}|${s.exchange}`;
    for (const s of sources) {
      if (!out.includes(s)) this.outliers.delete(key(s));
      else if (!this.outliers.has(key(s))) {
        this.outliers.add(key(s));
        this.log.warn({ pair, exchange: s.exchange }, 'source excluded as an outlier');
      }
    }
  }

  /** Restatements recorded since the previous rebuild (none at the first: those already recorded are not news). */
  private async newRestatements(): Promise<readonly { readonly id: string }[]> {
    if (!this.restatementsAfter) return [];
    if (this.lastRestatement === null) {
      this.lastRestatement = await latestRestatementId(this.sql);
      return [];
    }
    return this.restatementsAfter(this.sql, this.lastRestatement);
  }

  /** In a process without the pipeline: rebuild whenever a new ingest cycle has been recorded, then `onCycle`. */
  follow(everyMs = 5_000, onCycle?: () => void): void {
    let ticking = false; // a rebuild slower than the interval is not joined by another
    const tick = async () => {
      if (ticking) return;
      ticking = true;
      try {
        const id = await latestCycleId(this.sql);
        if (id !== this.lastCycle) {
          await this.refresh();
          // marked seen only once rebuilt, so a failed rebuild is tried again at the next tick
          // rather than waiting for the pipeline's next cycle (which may never come)
          this.lastCycle = id;
          onCycle?.();
        }
      } catch (err) {
        this.log.warn({ err }, 'live snapshot refresh failed');
      } finally {
        ticking = false;
      }
    };
    this.followTimer = setInterval(() => void tick(), everyMs);
    this.followTimer.unref();
  }

  private paced: Paced | null = null;
  private unlisten: (() => Promise<void>) | null = null;

  /**
   * Rebuilds after every stored trade, wherever it was stored (the writers' notices): at most once
   * every PUSH_SPACING_MS, so a burst of trades is one rebuild and one push.
   */
  async hear(notices: TradeNotices): Promise<void> {
    this.paced ??= new Paced(this.rebuilds, () => Math.max(PUSH_SPACING_MS, 2 * this.lastBuildMs), (err) => this.log.warn({ err }, 'live snapshot refresh failed'));
    const paced = this.paced;
    this.unlisten = await notices.listen(() => paced.ask());
  }

  stop(): void {
    clearInterval(this.followTimer);
    this.paced?.stop();
    void this.unlisten?.().catch(() => {});
  }
}
