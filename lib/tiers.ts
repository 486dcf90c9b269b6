// What each tier may do: the contract's "Limits" tables in one place.
import { INTERVALS, type IntervalName } from './intervals.js';

export const TIERS = ['free', 'builder', 'professional', 'enterprise'] as const;
export type Tier = (typeof TIERS)[number];

export interface TierRules {
  readonly rank: number;
  readonly perMinute: number;
  /** Requests per calendar month (UTC); null = unlimited. */
  readonly perMonth: number | null;
  readonly maxPage: number;
  readonly intervals: readonly IntervalName[];
  /** How far back historical may start, in days; null = full history. */
  readonly historyDays: number | null;
  /** Live streams (GET /v1/rates/stream) one key may hold open in an API process. */
  readonly streamsPerKey: number;
  /** Live streams a customer's keys may hold open together in an API process (an account holds up to 20 keys). */
  readonly streamsPerAccount: number;
  /**
   * Requests a customer may have in flight at once in an API process: its share, so one customer's
   * burst can't queue the others. Below a server pool's 10 connections, so one customer never holds them
   * all; at least what the dashboard asks for at once (a chart, its stream, fixings, webhooks).
   */
  readonly concurrent: number;
}

const HOUR_MS = 3_600_000;
/**
 * The candle intervals of a tier (lib/intervals.ts): Builder and up have every one; Free those an
 * hour wide or wider (the contract's 1h and 1d: sub-hourly candles are Builder's; docs/decisions.md).
 */
const intervalsAtLeast = (ms: number): readonly IntervalName[] => INTERVALS.filter((i) => i.ms >= ms).map((i) => i.name);

export const TIER_RULES: Readonly<Record<Tier, TierRules>> = {
  free: { rank: 0, perMinute: 10, perMonth: 5_000, maxPage: 500, intervals: intervalsAtLeast(HOUR_MS), historyDays: 30, streamsPerKey: 1, streamsPerAccount: 2, concurrent: 4 },
  builder: { rank: 1, perMinute: 30, perMonth: 25_000, maxPage: 2_500, intervals: intervalsAtLeast(0), historyDays: null, streamsPerKey: 3, streamsPerAccount: 6, concurrent: 5 },
  professional: { rank: 2, perMinute: 100, perMonth: 100_000, maxPage: 5_000, intervals: intervalsAtLeast(0), historyDays: null, streamsPerKey: 10, streamsPerAccount: 20, concurrent: 6 },
  enterprise: { rank: 3, perMinute: 10_000, perMonth: null, maxPage: 10_000, intervals: intervalsAtLeast(0), historyDays: null, streamsPerKey: 50, streamsPerAccount: 100, concurrent: 8 },
};

export const DEFAULT_PAGE = 500;

export function atLeast(tier: Tier, needed: Tier): boolean {
  return TIER_RULES[tier].rank >= TIER_RULES[needed].rank;
}

export const tierLabel = (tier: Tier) => tier.charAt(0).toUpperCase() + tier.slice(1);
