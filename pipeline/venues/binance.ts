// Binance (spot), through ccxt's own `binance` class.
//   API docs:     https://developers.binance.com/docs/binance-spot-api-docs/rest-api
//   Markets:      https://developers.binance.com/docs/binance-spot-api-docs/rest-api/general-endpoints#exchange-information (GET /api/v3/exchangeInfo)
//   Trades:       https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints#compressedaggregate-trades-list (GET /api/v3/aggTrades)
//   Rate limits:  https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits (6,000 request weight per minute per IP; aggTrades weighs 4)
//
// ccxt reads aggregate trades: `a` (aggregate trade id) is the id, `T` the trade time, `m` is true
// when the buyer was the maker, so the taker sold. With `since`, ccxt asks for the window
// [since, since + 1h] (startTime/endTime, inclusive; Binance refuses wider windows) and gets the
// oldest `limit` (max 1000) trades of it.
//
// Paging: ascending trades from `since`, up to 1000, and a full page whenever there is more. The
// one-hour window alone would break that, so: a window that ends before now without filling the
// page is topped up with the trades that follow it by id (aggTrades?fromId=last+1); a window with
// nothing after the trade at `since` (the collector's watermark) continues by id from that trade,
// however long the quiet spell; and a window with no trade at all (a first start in a quiet spell)
// is followed by the next hour, up to 24 per call, each empty window asked twice before it is
// stepped over, as long as it ends before Binance's clock (its Date header). Only spot public
// endpoints are used: markets come from exchangeInfo alone (no futures, options, margin or sapi
// currencies calls), and nothing needs an API key.
import type { Dict, Int, Trade } from 'ccxt';
import { binance as CcxtBinance } from '../ccxt.js';
import type { Venue, VenueOptions } from './types.js';
import { baseConfig, inspectResponse, pointAtSim, venueNow } from './shared.js';

const HOUR = 60 * 60 * 1000;
/** How many empty one-hour windows one fetchTrades call may step over. */
const MAX_EMPTY_WINDOWS = 24;
const DEFAULT_LIMIT = 500;
const MAX_LIMIT = 1000;

function isId(id: string | undefined): id is string {
  return id !== undefined && /^\d+$/.test(id);
}

class BinanceSpotExchange extends CcxtBinance {
  override async fetchTrades(symbol: string, since?: Int, limit?: Int, params: Dict = {}): Promise<Trade[]> {
    let trades = await super.fetchTrades(symbol, since, limit, params);
    if (since === undefined || since === null || 'until' in params || 'endTime' in params || 'fromId' in params) {
      return trades;
    }
    const pageSize = Math.min(limit ?? DEFAULT_LIMIT, MAX_LIMIT);
    const now = (): number => venueNow(this) ?? this.milliseconds();
    const hasNewer = (): boolean => trades.some((t) => (t.timestamp ?? 0) > since);
    /** The trades after an aggregate id, in id order (limit in params: as ccxt's limit without since, ccxt would keep the last ones). */
    const after = async (id: string, count: number): Promise<Trade[]> =>
      await super.fetchTrades(symbol, undefined, undefined, { ...params, fromId: (BigInt(id) + 1n).toString(), limit: count });

    const anchor = trades[trades.length - 1];
    if (!hasNewer() && anchor !== undefined && isId(anchor.id) && since + HOUR < now()) {
      // Nothing after `since` in its hour, but we hold the trade at `since` (the collector's
      // watermark): what follows it, however far away, comes by id.
      return trades.concat(await after(anchor.id, pageSize));
    }
    // Nothing at all in the window (a fresh start inside a quiet spell): step on hour by hour,
    // asking each empty window twice so that one silently empty answer cannot skip an hour.
    let windowStart = since; // the window asked for is [windowStart, windowStart + 1h]
    for (let i = 0; i < MAX_EMPTY_WINDOWS && !hasNewer() && windowStart + HOUR < now(); i++) {
      const again = await super.fetchTrades(symbol, windowStart, limit, params);
      if (again.length > 0) {
        trades = again;
        break;
      }
      windowStart += HOUR + 1;
      trades = await super.fetchTrades(symbol, windowStart, limit, params);
    }
    // A window that ended before now without filling the page: the trades after it follow by id.
    const last = trades[trades.length - 1];
    if (last !== undefined && isId(last.id) && trades.length < pageSize && windowStart + HOUR < now()) {
      trades = trades.concat(await after(last.id, pageSize - trades.length));
    }
    return trades;
  }

  override handleErrors(
    code: number,
    reason: string,
    url: string,
    method: string,
    headers: Dict,
    body: string,
    response: unknown,
    requestHeaders: unknown,
    requestBody: unknown,
  ): undefined {
    inspectResponse(this, code, url, headers as Record<string, string>, body, response);
    return super.handleErrors(code, reason, url, method, headers, body, response, requestHeaders, requestBody);
  }
}

export const binance: Venue = {
  id: 'binance',
  rateLimitDocs: 'https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits',
  // 6,000 weight per minute at 4 per aggTrades call is 1,500 calls a minute; we stay far below
  // (one call per 100 ms, two at a time), since other clients may share the IP.
  limits: { minTimeMs: 100, maxConcurrent: 2 },
  pageSize: 1000,
  // aggTrades reaches back to the listing of the pair: no bound.
  historyMs: undefined,
  create(options: VenueOptions = {}) {
    const exchange = new BinanceSpotExchange({
      ...baseConfig(options.timeoutMs),
      options: {
        defaultType: 'spot',
        fetchMarkets: { types: ['spot'], loadAllOptions: false }, // exchangeInfo only: no fapi/dapi/eapi
        fetchCurrencies: false, // sapi capital/config/getall needs an API key
        fetchMargins: false, // sapi margin pairs need an API key
        adjustForTimeDifference: false, // no /api/v3/time call
      },
    });
    if (options.simUrl) pointAtSim(exchange, options.simUrl);
    return exchange;
  },
};

// Raw payloads (https://developers.binance.com/docs/binance-spot-api-docs/rest-api).

/** GET /api/v3/exchangeInfo (the parts ccxt reads). */
export interface BinanceExchangeInfo {
  timezone: string;
  serverTime: number;
  symbols: Array<{
    symbol: string; // "BTCUSDT"
    status: 'TRADING' | 'BREAK' | 'HALT' | string;
    baseAsset: string;
    quoteAsset: string;
    baseAssetPrecision: number;
    quotePrecision: number;
    isSpotTradingAllowed: boolean;
    isMarginTradingAllowed: boolean;
    filters: Array<{ filterType: string; [key: string]: unknown }>;
    permissionSets: string[][];
  }>;
}

/** GET /api/v3/aggTrades?symbol=BTCUSDT&startTime=...&endTime=...&limit=1000 (oldest first). */
export type BinanceAggTradesResponse = Array<{
  a: number; // aggregate trade id: ccxt's trade id
  p: string; // price
  q: string; // quantity (base)
  f: number; // first trade id
  l: number; // last trade id
  T: number; // trade time, ms
  m: boolean; // buyer was the maker: taker side is sell
  M: boolean; // best price match
}>;
