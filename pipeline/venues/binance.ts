// Binance (spot), through ccxt's own `binance` class.
//   API docs:     https://developers.binance.com/docs/binance-spot-api-docs/rest-api
//                 (the same text: https://github.com/binance/binance-spot-api-docs, rest-api.md)
//   Markets:      https://developers.binance.com/docs/binance-spot-api-docs/rest-api/general-endpoints#exchange-information (GET /api/v3/exchangeInfo)
//   Trades:       https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints#compressedaggregate-trades-list (GET /api/v3/aggTrades)
//   Rate limits:  https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits (6,000 request weight per minute per IP; aggTrades weighs 4)
//
// ccxt reads aggregate trades: `a` (aggregate trade id) is the id, `T` the trade time, `m` is true
// when the buyer was the maker, so the taker sold.
//
// Paging: aggTrades with startTime alone returns the oldest `limit` (up to 1000) trades from then
// on, however far away they are: Binance lifted the one-hour limit between startTime and endTime
// on 2022-12-05 (CHANGELOG.md of its API docs). ccxt still asks for [since, since + 1h], so
// fetchTrades(symbol, since) asks aggTrades itself, with startTime = since (and endTime = `until`
// when given): ascending trades from `since`, and a full page whenever there is more. Only spot
// public endpoints are used: markets come from exchangeInfo alone (no futures, options, margin or
// sapi currencies calls), and nothing needs an API key.
import type { Dict, Int, Trade } from 'ccxt';
import { binance as CcxtBinance } from '../ccxt.js';
import type { Venue, VenueOptions } from './types.js';
import { baseConfig, inspectResponse, pointAtSim } from './shared.js';

const MAX_LIMIT = 1000;

class BinanceSpotExchange extends CcxtBinance {
  override async fetchTrades(symbol: string, since?: Int, limit?: Int, params: Dict = {}): Promise<Trade[]> {
    if (since === undefined || since === null || 'fromId' in params || 'startTime' in params) {
      return await super.fetchTrades(symbol, since, limit, params);
    }
    await this.loadMarkets();
    const market = this.market(symbol);
    const until = this.safeInteger(params, 'until');
    const request: Dict = { symbol: market.id, startTime: since };
    if (limit !== undefined && limit !== null) request.limit = Math.min(limit, MAX_LIMIT);
    if (until !== undefined) request.endTime = until;
    const response = (await this.publicGetAggTrades(this.extend(request, this.omit(params, 'until')))) as Dict[];
    return this.parseTrades(response, market, since, limit);
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

/** GET /api/v3/aggTrades?symbol=BTCUSDT&startTime=...&limit=1000 (oldest first). */
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
