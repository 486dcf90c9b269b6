// The FX sources afrates reads (units of fiat per 1 USD for NGN, ZAR, KES, GHS, UGX). With a
// simUrl they read the simulated market instead: ${simUrl}/exchangerate-api/v6/latest/USD and
// ${simUrl}/coinbase/v2/exchange-rates?currency=USD.
import { fetchCoinbase } from './coinbase.js';
import type { FxObservation, FxSourceId } from './common.js';
import { fetchExchangeRateApi } from './exchangerate_api.js';

export { FX_CURRENCIES, FxSourceError, type FxFetchOptions, type FxObservation, type FxRate, type FxSourceId } from './common.js';
export { fetchCoinbase } from './coinbase.js';
export { fetchExchangeRateApi } from './exchangerate_api.js';

export interface FxSourceOptions {
  /** Root of the simulated market; unset: the real source. */
  readonly simUrl?: string;
  readonly timeoutMs?: number;
  /** Clock for the observation's time (default Date.now). */
  readonly now?: () => number;
}

export interface FxSource {
  readonly id: FxSourceId;
  /** How often the source itself updates, ms (for freshness judgements). */
  readonly updatesEveryMs: number;
  fetch(options?: FxSourceOptions): Promise<FxObservation>;
}

function simBase(simUrl: string | undefined, prefix: string): string | undefined {
  return simUrl ? `${simUrl.replace(/\/+$/, '')}/${prefix}` : undefined;
}

export const exchangeRateApi: FxSource = {
  id: 'exchangerate_api',
  updatesEveryMs: 24 * 60 * 60 * 1000,
  fetch: (o = {}) => fetchExchangeRateApi({ baseUrl: simBase(o.simUrl, 'exchangerate-api'), timeoutMs: o.timeoutMs, now: o.now }),
};

export const coinbase: FxSource = {
  id: 'coinbase',
  updatesEveryMs: 60 * 1000,
  fetch: (o = {}) => fetchCoinbase({ baseUrl: simBase(o.simUrl, 'coinbase'), timeoutMs: o.timeoutMs, now: o.now }),
};

export const fxSources: readonly FxSource[] = [exchangeRateApi, coinbase];
