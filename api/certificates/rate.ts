// The rate a certificate certifies: the 5-minute VWAP across venues with the live rate's outlier
// rule applied (stateless: each bucket judged on its own), so a certificate never signs a venue the
// published rate would have left out.
import { combinedVwap, outliers } from '../verification.js';

/** One venue's 5-minute candle: what a certified rate is combined from. */
export interface VenueBucketRow {
  readonly bucket: Date;
  readonly exchange: string;
  readonly pv: string;
  readonly volume: string;
  readonly trades: string;
}

export interface CertifiedRate {
  readonly rate: number;
  readonly sources: string[];
  readonly prices: number[];
  readonly excluded: string[];
  readonly trades: number;
  readonly volume: number;
}

export function certifiedRate(rows: readonly VenueBucketRow[]): CertifiedRate {
  const prices = rows.map((r) => Number(r.pv) / Number(r.volume));
  const out = new Set(outliers(prices));
  const kept = rows.filter((_, i) => !out.has(i));
  const { rate, volume } = combinedVwap(kept.map((r) => ({ pv: Number(r.pv), volume: Number(r.volume) })));
  return {
    rate,
    sources: kept.map((r) => r.exchange),
    prices: prices.filter((_, i) => !out.has(i)),
    excluded: rows.filter((_, i) => out.has(i)).map((r) => r.exchange),
    trades: kept.reduce((a, r) => a + Number(r.trades), 0),
    volume,
  };
}

/** Groups venue rows by bucket, keeping the rows' order (newest first). */
export function byBucket(rows: readonly VenueBucketRow[]): Map<number, VenueBucketRow[]> {
  const groups = new Map<number, VenueBucketRow[]>();
  for (const r of rows) {
    const list = groups.get(r.bucket.getTime()) ?? [];
    list.push(r);
    groups.set(r.bucket.getTime(), list);
  }
  return groups;
}
