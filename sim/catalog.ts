// What the generated market trades: price levels, volatilities, FX levels, the local-market
// premium, which venue lists which pair and how busy each book is. Levels are late-2026-ish.
import type { SimVenue } from './types.js';

export interface AssetSpec {
  /** USD price level around which the path wanders. */
  readonly usd: number;
  /** Daily volatility of log price. */
  readonly dailyVol: number;
  /** How much of BTC's move it follows (0 for stablecoins). */
  readonly betaToBtc: number;
  /** Decimals of amounts (volume scale). */
  readonly amountDecimals: number;
}

export const ASSETS: Readonly<Record<string, AssetSpec>> = {
  BTC: { usd: 90_000, dailyVol: 0.022, betaToBtc: 0, amountDecimals: 6 },
  ETH: { usd: 3_200, dailyVol: 0.03, betaToBtc: 0.75, amountDecimals: 5 },
  XRP: { usd: 2.2, dailyVol: 0.04, betaToBtc: 0.6, amountDecimals: 1 },
  SOL: { usd: 180, dailyVol: 0.04, betaToBtc: 0.7, amountDecimals: 3 },
  USDT: { usd: 1, dailyVol: 0.0004, betaToBtc: 0, amountDecimals: 2 },
  USDC: { usd: 1, dailyVol: 0.0003, betaToBtc: 0, amountDecimals: 2 },
};

export interface FiatSpec {
  /** Units of the currency per 1 USD (official/interbank level). */
  readonly perUsd: number;
  readonly dailyVol: number;
  /** How much dearer crypto is on local books than at the official rate (parallel-market premium). */
  readonly premium: number;
}

export const FIATS: Readonly<Record<string, FiatSpec>> = {
  NGN: { perUsd: 1_530, dailyVol: 0.006, premium: 0.035 },
  ZAR: { perUsd: 18, dailyVol: 0.007, premium: 0.004 },
  KES: { perUsd: 129, dailyVol: 0.002, premium: 0.015 },
  GHS: { perUsd: 15, dailyVol: 0.005, premium: 0.025 }, // FX only: no venue here lists a GHS book
  UGX: { perUsd: 3_650, dailyVol: 0.003, premium: 0.02 },
  // Served by the FX endpoints alongside afrates' currencies, as the real ones do.
  EUR: { perUsd: 0.92, dailyVol: 0.004, premium: 0 },
  GBP: { perUsd: 0.79, dailyVol: 0.004, premium: 0 },
};

export interface Listing {
  readonly pair: string;
  /** Mean trades per minute outside bursts. */
  readonly perMinute: number;
}

/**
 * Who lists what, of afrates' pairs (each venue lists more; loadMarkets finds these among them).
 * The sources for each venue are in its wire file (venues/*.ts) and docs/decisions.md:
 * - Luno: NGN and ZAR books, BTC/KES and BTC/UGX. Its API reference lists UGX among its currencies
 *   with XBTUGX as an example pair; KES is taken from the project's decision that Luno serves KES
 *   books (no source seen shows which KES pairs, so only BTC/KES).
 * - Binance: the internal USDT books only: it delisted its NGN pairs on 2024-03-07 and its ZAR
 *   pairs in April 2021 and again in January 2026.
 * - VALR: the ZAR books (its futures, such as USDTZARPERP, are listed too and left out by the adapter).
 * - Quidax: NGN books only (no GHS).
 * Nobody here lists ETH, XRP, USDT or USDC against KES, or USDT against UGX, or anything against
 * GHS: those pairs fall back to the synthetic cross-rate.
 */
export const LISTINGS: Readonly<Record<SimVenue, readonly Listing[]>> = {
  luno: [
    { pair: 'BTCNGN', perMinute: 3 },
    { pair: 'ETHNGN', perMinute: 1 },
    { pair: 'XRPNGN', perMinute: 0.6 },
    { pair: 'SOLNGN', perMinute: 0.4 },
    { pair: 'USDTNGN', perMinute: 3 },
    { pair: 'USDCNGN', perMinute: 0.5 },
    { pair: 'BTCZAR', perMinute: 4 },
    { pair: 'ETHZAR', perMinute: 1.5 },
    { pair: 'XRPZAR', perMinute: 1 },
    { pair: 'SOLZAR', perMinute: 0.5 },
    { pair: 'USDTZAR', perMinute: 1.5 },
    { pair: 'BTCKES', perMinute: 0.5 },
    { pair: 'BTCUGX', perMinute: 0.2 },
  ],
  binance: [
    { pair: 'BTCUSDT', perMinute: 12 },
    { pair: 'ETHUSDT', perMinute: 8 },
    { pair: 'XRPUSDT', perMinute: 5 },
    { pair: 'SOLUSDT', perMinute: 5 },
  ],
  valr: [
    { pair: 'BTCZAR', perMinute: 5 },
    { pair: 'ETHZAR', perMinute: 2 },
    { pair: 'XRPZAR', perMinute: 2 },
    { pair: 'SOLZAR', perMinute: 1 },
    { pair: 'USDTZAR', perMinute: 3 },
  ],
  quidax: [
    { pair: 'BTCNGN', perMinute: 1.5 },
    { pair: 'ETHNGN', perMinute: 0.8 },
    { pair: 'XRPNGN', perMinute: 0.4 },
    { pair: 'USDTNGN', perMinute: 2.5 },
  ],
};

/**
 * Binance's USDT books at their real pace, in aggregate trades a minute (the simulator's `volume:
 * 'real'`): 300 to 1,000 a minute each on a real day, about 1.66 million a day for the four.
 */
export const REAL_VOLUME_USDT_LEGS: Readonly<Record<string, number>> = {
  BTCUSDT: 400,
  ETHUSDT: 300,
  SOLUSDT: 250,
  XRPUSDT: 200,
};

/** Price decimals (tick = 10^-decimals) of a book; amounts use the base asset's decimals. */
export function priceDecimals(base: string, quote: string): number {
  const price = (ASSETS[base]?.usd ?? 1) * (FIATS[quote]?.perUsd ?? ASSETS[quote]?.usd ?? 1);
  if (quote === 'USDT' || quote === 'USDC') return price >= 100 ? 2 : 4;
  if (price >= 10_000) return 0;
  if (price >= 10) return 2;
  return 4;
}

export function amountDecimals(base: string): number {
  return ASSETS[base]?.amountDecimals ?? 8;
}

/** A pair's id on a venue. */
export function venueSymbol(venue: string, base: string, quote: string): string {
  switch (venue) {
    case 'luno':
      return `${lunoCurrency(base)}${lunoCurrency(quote)}`;
    case 'quidax':
      return `${base}${quote}`.toLowerCase();
    default:
      return `${base}${quote}`;
  }
}

/** Luno calls bitcoin XBT. */
export function lunoCurrency(code: string): string {
  return code === 'BTC' ? 'XBT' : code;
}
