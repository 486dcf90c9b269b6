// Live rates as JSON text, made once per pair, presentation and second, and reused by every
// request in that second: a live or markets request then costs a lookup per pair, not an
// assessment, an object and its serialisation. Presentations are worked out at the whole second
// (ages are whole seconds), so every request of one second sees the same values, and a snapshot
// refresh (a new version) starts afresh.
import type { CertificateSigner } from '../../lib/signer.js';
import { SharedTail } from '../middleware/compress.js';
import type { Tier } from '../../lib/tiers.js';
import { assess, type Assessment } from '../../lib/live/assess.js';
import { presentLive } from './present.js';
import type { LiveEntry, LiveSnapshot } from '../../lib/live/snapshot.js';

export interface Presentation {
  readonly tier: Tier;
  readonly includeSynthetic?: boolean;
  readonly includeSources?: boolean;
  readonly includeAudit?: boolean;
  readonly market?: 'real' | 'simulated';
}

export interface MarketsData {
  /** how many pairs are live */
  readonly count: number;
  /** the answer from `data` on (`{<pair>: rate, ...}}`), to follow each request's own meta, gzipped once a second */
  readonly answerTail: SharedTail;
}

export interface PresentedRate {
  readonly entry: LiveEntry;
  readonly assessment: Assessment;
  /** The contract's live rate object as JSON text. */
  readonly json: string;
}

export class LiveJsonCache {
  private second = -1;
  private version = -1;
  private readonly rates = new Map<string, PresentedRate>();
  private readonly markets = new Map<string, MarketsData>();
  private readonly answers = new Map<string, string>();

  constructor(
    private readonly snapshot: LiveSnapshot,
    private readonly signer: CertificateSigner,
  ) {}

  /** The moment presentations are made for: now, to the whole second. */
  static moment(nowMs: number): Date {
    return new Date(Math.floor(nowMs / 1000) * 1000);
  }

  private current(nowMs: number): Date {
    const second = Math.floor(nowMs / 1000);
    if (second !== this.second || this.snapshot.version !== this.version) {
      this.second = second;
      this.version = this.snapshot.version;
      this.rates.clear();
      this.markets.clear();
      this.answers.clear();
    }
    return new Date(second * 1000);
  }

  /** One pair's presented rate, or undefined when the snapshot has none for it. */
  rate(pair: string, p: Presentation, nowMs: number): PresentedRate | undefined {
    const now = this.current(nowMs);
    const key = `${pair}|${p.tier}|${p.includeSynthetic ? 1 : 0}${p.includeSources ? 1 : 0}${p.includeAudit ? 1 : 0}|${p.market ?? ''}`;
    let hit = this.rates.get(key);
    if (!hit) {
      const entry = this.snapshot.get(pair);
      if (!entry) return undefined;
      const assessment = assess(entry, now);
      hit = { entry, assessment, json: JSON.stringify(presentLive(entry, { ...p, now, signer: this.signer }, assessment)) };
      this.rates.set(key, hit);
    }
    return hit;
  }

  /**
   * `data` of a live answer as JSON text, made by `build` once per `key` and second: the key must name all it
   * depends on besides the snapshot and the second (the query's text, the tier, the market). A
   * build that throws is not kept.
   */
  liveData(key: string, nowMs: number, build: () => string): string {
    this.current(nowMs);
    let data = this.answers.get(key);
    if (!data) {
      data = build();
      // bounded within a second too: an answer can be 25 KB (50 pairs), and clients poll a few queries
      if (this.answers.size >= 1_000) this.answers.clear();
      this.answers.set(key, data);
    }
    return data;
  }

  /** GET /v1/rates/markets for a tier, from `data` on: every live pair, as JSON text, and how many. */
  marketsData(tier: Tier, nowMs: number, isLive: (a: Assessment) => boolean): MarketsData {
    this.current(nowMs);
    const cached = this.markets.get(tier);
    if (cached) return cached;
    const parts: string[] = [];
    for (const entry of this.snapshot.all()) {
      const presented = this.rate(entry.pair, { tier }, nowMs)!;
      if (isLive(presented.assessment)) parts.push(`${JSON.stringify(entry.pair)}:${presented.json}`);
    }
    // the answer is {"meta":{...},"data":{...}}: everything from the data on is the same for the second
    const data = { count: parts.length, answerTail: new SharedTail(`{${parts.join(',')}}}`) };
    this.markets.set(tier, data);
    return data;
  }
}
