// Quidax: not in ccxt, so a ccxt-style exchange class of our own (`Quidax extends PublicRestExchange`, a ccxt `Exchange`) that
// goes through ccxt's machinery (loadMarkets, safe* helpers, symbols, errors) like the built-in ones.
//   API docs:     https://docs.quidax.io/ (public base https://app.quidax.io/api/v1)
//   Markets:      GET /markets              {"status":"success","data":[{id:"btcngn", base_unit, quote_unit, ...}]}
//   Trades:       GET /trades/{market}      {"status":"success","data":[{trade_id, price, base_volume, quote_volume, timestamp, type}]}
//   Rate limits:  https://docs.quidax.io/docs/security: 300 requests a minute for every endpoint
//                 but wallet address creation (20 a second).
//   Sources for the paths and fields beyond the docs: clients written against the live API,
//   https://github.com/gray-adeyi/pyquidax (markets, trades/{market}) and
//   https://github.com/OnuegbuUdochukwu/Quidax-public-trades-feed (the trade fields and the
//   {status, data} envelope).
//
// LIMITATION: Quidax's public trades endpoint takes no time or cursor parameter: it only returns
// the most recent trades (about the last 100). fetchTrades(symbol, since) filters that list by
// `since` client-side, so the collector must poll each Quidax pair often enough that fewer than a
// page of trades happen between polls; a longer outage cannot be backfilled from Quidax.
// `type` is the taker's side. `timestamp` is read as ms (seconds are recognised and converted:
// the sources give its type, an integer, not its unit); the older `id`/`volume`/`funds`/`side`/
// `created_at` field names are accepted too. Markets carry precisions (`trading_rules`) only in
// older documents; without them a market has none. Today Quidax lists NGN markets (no GHS).
import type { Dict, Int, Market, Trade } from 'ccxt';
import { BadResponse, BadSymbol, ExchangeError, functions } from '../ccxt.js';
import type { Venue, VenueOptions } from './types.js';
import { baseConfig, inspectResponse, pointAtSim, PublicRestExchange, PUBLIC_TRADES_ONLY } from './shared.js';

const RECENT = 100;

export class Quidax extends PublicRestExchange {
  override describe(): Dict {
    return this.deepExtend(super.describe(), {
      id: 'quidax',
      name: 'Quidax',
      countries: ['NG'],
      version: 'v1',
      rateLimit: 200, // 300 calls a minute
      pro: false,
      has: PUBLIC_TRADES_ONLY,
      urls: {
        api: { public: 'https://app.quidax.io/api/v1' },
        www: 'https://www.quidax.io',
        doc: ['https://docs.quidax.io/'],
      },
      api: {
        public: {
          get: {
            markets: 1,
            'trades/{market}': 1,
          },
        },
      },
      precisionMode: functions.TICK_SIZE,
      exceptions: {
        exact: {},
        broad: {
          'not found': BadSymbol,
        },
      },
    });
  }

  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    const response = (await this.request('markets', 'public', 'GET', params)) as Dict;
    const data = this.safeList(response, 'data');
    if (data === undefined) throw new BadResponse(`${this.id} fetchMarkets: no "data" list in the response`);
    return data.map((m) => this.parseMarket(m as Dict));
  }

  override parseMarket(market: Dict): Market {
    const id = this.safeStringLower(market, 'id');
    const baseId = this.safeStringLower(market, 'base_unit');
    const quoteId = this.safeStringLower(market, 'quote_unit');
    const base = this.safeCurrencyCode(baseId?.toUpperCase());
    const quote = this.safeCurrencyCode(quoteId?.toUpperCase());
    const rules = this.safeDict(market, 'trading_rules', {}) as Dict;
    const amountDecimals = this.safeString(rules, 'base_precision');
    const priceDecimals = this.safeString(rules, 'price_precision');
    return this.safeMarketStructure({
      id,
      symbol: `${base}/${quote}`,
      base,
      quote,
      settle: undefined,
      baseId,
      quoteId,
      settleId: undefined,
      type: 'spot',
      spot: true,
      margin: false,
      swap: false,
      future: false,
      option: false,
      active: true,
      contract: false,
      linear: undefined,
      inverse: undefined,
      contractSize: undefined,
      expiry: undefined,
      expiryDatetime: undefined,
      strike: undefined,
      optionType: undefined,
      precision: {
        amount: amountDecimals === undefined ? undefined : this.parseNumber(this.parsePrecision(amountDecimals)),
        price: priceDecimals === undefined ? undefined : this.parseNumber(this.parsePrecision(priceDecimals)),
      },
      limits: {
        leverage: { min: undefined, max: undefined },
        amount: { min: this.safeNumber(rules, 'minimum_order_size'), max: undefined },
        price: { min: undefined, max: undefined },
        cost: { min: undefined, max: undefined },
      },
      created: undefined,
      info: market,
    });
  }

  /** The most recent trades only (see the header): `since` and `limit` are applied to that list. */
  override async fetchTrades(symbol: string, since?: Int, limit?: Int, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const response = (await this.request('trades/{market}', 'public', 'GET', this.extend({ market: market.id }, params))) as Dict;
    const data = this.safeList(response, 'data');
    if (data === undefined) throw new BadResponse(`${this.id} fetchTrades: no "data" list in the response`);
    return this.parseTrades(data as Dict[], market, since, limit);
  }

  override parseTrade(trade: Dict, market?: Market): Trade {
    let timestamp = this.safeInteger(trade, 'timestamp');
    if (timestamp !== undefined && timestamp < 100_000_000_000) timestamp *= 1000; // seconds
    timestamp ??= this.parse8601(this.safeString(trade, 'created_at'));
    const resolved = this.safeMarket(this.safeStringLower(trade, 'market'), market);
    return this.safeTrade(
      {
        info: trade,
        id: this.safeString2(trade, 'trade_id', 'id'),
        order: undefined,
        timestamp,
        datetime: this.iso8601(timestamp),
        symbol: resolved.symbol,
        type: undefined,
        side: this.safeStringLower2(trade, 'type', 'side'),
        takerOrMaker: 'taker',
        price: this.safeString(trade, 'price'),
        amount: this.safeString2(trade, 'base_volume', 'volume'),
        cost: this.safeString2(trade, 'quote_volume', 'funds'),
        fee: undefined,
      },
      resolved,
    );
  }

  override handleErrors(
    code: number,
    reason: string,
    url: string,
    method: string,
    headers: Dict,
    body: string,
    response: unknown,
  ): undefined {
    inspectResponse(this, code, url, headers as Record<string, string>, body, response);
    // 429 and 5xx: ccxt's HTTP status mapping (RateLimitExceeded, ExchangeNotAvailable).
    if (code === 429 || code >= 500) return undefined;
    const status = this.safeString(response as Dict, 'status');
    if (code < 400 && status !== 'error') return undefined;
    const message = this.safeString(response as Dict, 'message') ?? reason;
    const feedback = `${this.id} ${method} ${url} ${code} ${body}`;
    this.throwBroadlyMatchedException(this.exceptions['broad'], message, feedback);
    throw new ExchangeError(feedback);
  }
}

export const quidax: Venue = {
  id: 'quidax',
  rateLimitDocs: 'https://docs.quidax.io/docs/security',
  // Published: 300 calls a minute (one per 200 ms). We keep to one per 250 ms, one at a time.
  limits: { minTimeMs: 250, maxConcurrent: 1 },
  pageSize: RECENT,
  // Recent trades only (see the header): `since` cannot reach back past the latest ~100 trades.
  historyMs: 0,
  create(options: VenueOptions = {}) {
    const exchange = new Quidax(baseConfig(options.timeoutMs));
    if (options.simUrl) pointAtSim(exchange, options.simUrl);
    return exchange;
  },
};

// Raw payloads (https://docs.quidax.io/).

/** GET /api/v1/markets */
export interface QuidaxMarketsResponse {
  status: 'success' | 'error';
  message: string;
  data: Array<{
    id: string; // "btcngn"
    base_unit: string; // "btc"
    quote_unit: string; // "ngn"
    name?: string; // "BTC/NGN"
    trading_rules?: { base_precision: number; quote_precision: number; price_precision: number; minimum_order_size: number };
  }>;
}

/** GET /api/v1/trades/btcngn (newest first). */
export interface QuidaxTradesResponse {
  status: 'success' | 'error';
  message: string;
  data: Array<{
    trade_id: number; // an integer
    price: string;
    base_volume: string;
    quote_volume: string;
    timestamp: number; // an integer: ms (seconds are read too)
    type: 'buy' | 'sell'; // the taker's side
  }>;
}
