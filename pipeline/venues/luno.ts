// Luno, through ccxt's own `luno` class.
//   API docs:        https://www.luno.com/en/developers/api
//   Markets:         https://www.luno.com/en/developers/api#tag/Market/operation/Markets  (GET /api/exchange/1/markets)
//   Trades:          https://www.luno.com/en/developers/api#tag/Market/operation/ListTrades (GET /api/1/trades?pair&since)
//   Rate limits:     https://www.luno.com/en/developers/api#tag/Rate-Limiting (300 calls per minute)
//   Types:           https://github.com/luno/luno-go (types.go: PublicTrade, MarketInfo)
//
// Markets: Luno's list (Markets) holds its fiat books (the reference names NGN, ZAR and UGX, with
// XBTUGX among its example pairs; the project's decisions add KES) among others; which venue
// serves which pair is read from it at run time. Market data "may be cached for up to 1 second"
// (the reference's Market section): well inside the collector's grace (PUBLISH_GRACE_MS).
// ListTrades returns at most 100 trades, sorted newest first, never older than 24h; `since` (ms)
// returns the trades executed *after* that time (so a client can iterate past the 100 most
// recent), and a `since` before 24h ago is an error. Bitcoin is XBT on Luno (ccxt maps it to BTC).
// Public trades carry no id of their own: ccxt uses `sequence`; `is_buy` is true when the taker
// bought.
//
// Paging: fetchTrades(symbol, since) asks Luno for since - 1 (Luno's since is exclusive, the
// collector's is inclusive), clamped to the 24h Luno keeps (judged by Luno's clock, from its Date
// header). So from the collector's point of view: ascending trades from `since`, up to 100, and
// nothing older than 24h; a gap longer than that cannot be backfilled from Luno.
import type { Dict, Int, Trade } from 'ccxt';
import { luno as CcxtLuno } from '../ccxt.js';
import type { Venue, VenueOptions } from './types.js';
import { baseConfig, inspectResponse, pointAtSim, venueNow } from './shared.js';

const HISTORY_MS = 24 * 60 * 60 * 1000;
/** Keep `since` this far inside Luno's 24h window, for clock skew and request latency. */
const HISTORY_MARGIN_MS = 60_000;

class LunoExchange extends CcxtLuno {
  override async fetchTrades(symbol: string, since?: Int, limit?: Int, params: Dict = {}): Promise<Trade[]> {
    if (since === undefined || since === null) return await super.fetchTrades(symbol, since, limit, params);
    await this.loadMarkets(); // also learns Luno's clock
    const now = venueNow(this);
    const from = now === undefined ? since : Math.max(since, now - HISTORY_MS + HISTORY_MARGIN_MS);
    const trades = await super.fetchTrades(symbol, from - 1, limit, params);
    return trades.filter((t) => t.timestamp !== undefined && t.timestamp >= from);
  }

  override handleErrors(
    httpCode: number,
    reason: string,
    url: string,
    method: string,
    headers: Dict,
    body: string,
    response: unknown,
    requestHeaders: unknown,
    requestBody: unknown,
  ): undefined {
    inspectResponse(this, httpCode, url, headers as Record<string, string>, body, response);
    return super.handleErrors(httpCode, reason, url, method, headers, body, response, requestHeaders, requestBody);
  }
}

export const luno: Venue = {
  id: 'luno',
  rateLimitDocs: 'https://www.luno.com/en/developers/api#tag/Rate-Limiting',
  // Published: 300 calls per minute (one per 200 ms). We keep to one per 250 ms, one at a time.
  limits: { minTimeMs: 250, maxConcurrent: 1 },
  pageSize: 100,
  historyMs: HISTORY_MS,
  create(options: VenueOptions = {}) {
    const exchange = new LunoExchange(baseConfig(options.timeoutMs));
    if (options.simUrl) pointAtSim(exchange, options.simUrl);
    return exchange;
  },
};

// Raw payloads (https://www.luno.com/en/developers/api#tag/Market).

/** GET /api/exchange/1/markets */
export interface LunoMarketsResponse {
  markets: Array<{
    market_id: string; // "XBTNGN"
    trading_status: 'ACTIVE' | 'POST_ONLY' | 'SUSPENDED' | 'UNKNOWN';
    base_currency: string; // "XBT"
    counter_currency: string; // "NGN"
    min_volume: string; // decimal strings
    max_volume: string;
    volume_scale: number; // integers
    min_price: string;
    max_price: string;
    price_scale: number;
    fee_scale: number;
  }>;
}

/** GET /api/1/trades?pair=XBTNGN&since=1732096800000 (newest first). */
export interface LunoTradesResponse {
  trades: Array<{
    sequence: number; // ccxt's trade id: "the ever incrementing trade identifier within a market"
    timestamp: number; // ms
    price: string; // decimal strings
    volume: string; // base amount
    is_buy: boolean; // taker side: true = buy
  }>;
}
