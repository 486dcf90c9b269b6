// VALR: not in ccxt, so a ccxt-style exchange class of our own (`Valr extends PublicRestExchange`, a ccxt `Exchange`) that goes
// through ccxt's machinery (loadMarkets, safe* helpers, symbols, errors) like the built-in ones.
//   API docs:     https://docs.valr.com/ (rendered with examples at https://api-docs.rooibos.dev/)
//   Markets:      GET /v1/public/pairs  (https://docs.valr.com/ "Currency Pairs"; futures such as
//                 USDTZARPERP are listed too, with currencyPairType FUTURE, and left out here)
//   Trades:       GET /v1/public/{currencyPair}/trades?skip&limit&startTime&endTime&beforeId
//                 (https://api-docs.rooibos.dev/operations/getV1PublicCurrencyPairTrades)
//   Rate limits:  https://docs.valr.com/ "Rate Limiting" (also rendered at
//                 https://api-docs.rooibos.dev/guides/rate-limiting): 1,200 calls per minute per IP
//                 and, for GET /v1/public/*, 30 calls per minute; 429 with header x-valr-ratelimited.
//   Caching:      the trades endpoint is cached 30 s by VALR's CDN (`cache-control: max-age=30`;
//                 not in VALR's documents: docs/decisions.md, "Venue facts", says where it comes
//                 from): the same URL gets the same answer for 30 s, so a trade made meanwhile is
//                 not in it.
//
// Public trades come newest first, at most 100 per call; startTime/endTime (ISO 8601) filter by
// trade time, skip pages through the filtered result, beforeId walks backwards by trade id.
// `takerSide` is the taker's side, `id` the trade id (a UUID), `tradedAt` the trade time;
// `sequenceId` is beyond 2^53, which ccxt's JSON reading keeps as an exact string.
//
// Paging: the API has no "oldest trades after X" query, only "newest trades since startTime",
// walking backwards with beforeId. fetchTrades(symbol, since) asks for the trades since `since`:
// a page short of 100 is all of them (caught up: one call, the steady state). A full page means
// more: it walks back with beforeId (startTime still `since`) until a page comes back short, then
// returns the oldest 100 and keeps the rest, so the calls that follow (since = the last trade
// handed out) are served from memory; the last, short page always comes from a fresh call. A walk
// has no cap: it goes on (spaced by the rate limit) until it reaches `since`, so a long backlog is
// never cut short. `params.until` (ms, the ccxt convention) walks back from then instead of now: a
// backfill reads its own day. So from the collector's point of view: ascending trades from
// `since`, up to 100, a full page whenever there is more, and one API call per 100 trades.
//
// The CDN: every call names an endTime, `until` or else the venue's clock (a second on, for the
// Date header's resolution) and never the same one twice for a market, so no two calls share a URL:
// an answer is never a copy kept from up to 30 s before, and a short page means "caught up" as of
// that call. The one re-ask of an empty page (below) adds skip=0 (the default), so it is not the
// empty answer kept for the URL just asked.
import type { Dict, Int, Market, Trade } from 'ccxt';
import { BadRequest, BadResponse, BadSymbol, ExchangeError, functions } from '../ccxt.js';
import type { Venue, VenueOptions } from './types.js';
import { baseConfig, inspectResponse, pointAtSim, PublicRestExchange, PUBLIC_TRADES_ONLY, venueNow } from './shared.js';

const PAGE = 100;
/** The Date header (the venue's clock) is to the second: the venue's now is before its Date plus this. */
const DATE_RESOLUTION_MS = 1000;
/** How far past the venue's clock, as last seen, a call's endTime is set (a second for the Date's resolution, one for the call). */
const END_TIME_AHEAD_MS = 2000;
/** Calls in a row whose endTime the venue's clock had passed (its clock moved on faster than ours), after which the last answer stands. */
const CLOCK_CATCH_UPS = 3;

/**
 * The first `size` trades and the rest of the last one's millisecond: callers page on by time
 * (since = the newest trade's, inclusive), so a page that ended inside a millisecond whose trades
 * outnumber a page (one order sweeping the book) could never reach the rest of them.
 */
function throughLastMillisecond(trades: readonly BufferedTrade[], size: number): BufferedTrade[] {
  let end = Math.min(size, trades.length);
  while (end > 0 && end < trades.length && trades[end]!.time === trades[end - 1]!.time) end++;
  return trades.slice(0, end);
}

interface BufferedTrade {
  readonly time: number;
  readonly raw: Dict;
}

export class Valr extends PublicRestExchange {
  /** Per market: the trades of a finished walk, oldest first, still to be handed out. */
  private readonly buffers = new Map<string, BufferedTrade[]>();
  /** Per market: the last endTime asked with, so the next is later (a URL of its own). */
  private readonly lastEndTimes = new Map<string, number>();

  override describe(): Dict {
    return this.deepExtend(super.describe(), {
      id: 'valr',
      name: 'VALR',
      countries: ['ZA'],
      version: 'v1',
      rateLimit: 2000, // GET /v1/public/*: 30 calls per minute
      pro: false,
      has: PUBLIC_TRADES_ONLY,
      urls: {
        api: { public: 'https://api.valr.com' },
        www: 'https://www.valr.com',
        doc: ['https://docs.valr.com/'],
      },
      api: {
        public: {
          get: {
            'v1/public/pairs': 1,
            'v1/public/{currencyPair}/trades': 1,
          },
        },
      },
      precisionMode: functions.TICK_SIZE,
      options: {
        /** Pause between the calls of one walk (undefined: rateLimit). */
        callSpacingMs: undefined,
      },
      exceptions: {
        exact: {},
        broad: {
          'not supported': BadSymbol,
          'Invalid currency pair': BadSymbol,
        },
      },
    });
  }

  override async fetchMarkets(params: Dict = {}): Promise<Market[]> {
    const response: unknown = await this.request('v1/public/pairs', 'public', 'GET', params);
    if (!Array.isArray(response)) throw new BadResponse(`${this.id} fetchMarkets: expected an array of pairs`);
    return (response as ValrPair[])
      .filter((p) => (this.safeString(p, 'currencyPairType') ?? 'SPOT') === 'SPOT')
      .map((p) => this.parseMarket(p as unknown as Dict));
  }

  override parseMarket(pair: Dict): Market {
    const id = this.safeString(pair, 'symbol');
    const baseId = this.safeString(pair, 'baseCurrency');
    const quoteId = this.safeString(pair, 'quoteCurrency');
    const base = this.safeCurrencyCode(baseId);
    const quote = this.safeCurrencyCode(quoteId);
    const baseDecimals = this.safeString(pair, 'baseDecimalPlaces');
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
      margin: this.safeBool(pair, 'marginTradingAllowed', false),
      swap: false,
      future: false,
      option: false,
      active: this.safeBool(pair, 'active', true),
      contract: false,
      linear: undefined,
      inverse: undefined,
      contractSize: undefined,
      expiry: undefined,
      expiryDatetime: undefined,
      strike: undefined,
      optionType: undefined,
      precision: {
        amount: baseDecimals === undefined ? undefined : this.parseNumber(this.parsePrecision(baseDecimals)),
        price: this.safeNumber(pair, 'tickSize'),
      },
      limits: {
        leverage: { min: undefined, max: undefined },
        amount: { min: this.safeNumber(pair, 'minBaseAmount'), max: this.safeNumber(pair, 'maxBaseAmount') },
        price: { min: undefined, max: undefined },
        cost: { min: this.safeNumber(pair, 'minQuoteAmount'), max: this.safeNumber(pair, 'maxQuoteAmount') },
      },
      created: undefined,
      info: pair,
    });
  }

  override async fetchTrades(symbol: string, since?: Int, limit?: Int, params: Dict = {}): Promise<Trade[]> {
    await this.loadMarkets();
    const market = this.market(symbol);
    const marketId = market.id as string;
    const pageSize = Math.min(limit ?? PAGE, PAGE);
    const until = this.safeInteger(params, 'until');
    const rest = this.omit(params, 'until');
    if (since === undefined || since === null) {
      const page = await this.currentPage(marketId, this.extend({ currencyPair: market.id, limit: pageSize }, rest), until);
      return this.parseTrades(page as unknown as Dict[], market, undefined, limit);
    }
    // Serve a full page from a finished walk that covers `since`; the last (short) page is asked
    // afresh below, so that it also holds whatever traded since the walk.
    const buffered = this.buffers.get(marketId);
    this.buffers.delete(marketId);
    const first = buffered?.[0];
    if (buffered !== undefined && first !== undefined && since >= first.time) {
      const left = buffered.filter((t) => t.time >= since);
      if (left.length > pageSize) {
        this.buffers.set(marketId, left);
        return this.parseTrades(throughLastMillisecond(left, pageSize).map((t) => t.raw), market, since);
      }
    }
    // Walk back from `until` (or now) to `since`, a page at a time, as far as it takes.
    const spacing = this.safeInteger(this.options, 'callSpacingMs') ?? this.rateLimit ?? 0;
    const pages: ValrTrade[][] = [];
    let beforeId: string | undefined;
    for (;;) {
      if (pages.length > 0 && spacing > 0) await this.sleep(spacing);
      const request: Dict = this.extend({ currencyPair: market.id, limit: PAGE, startTime: this.iso8601(since) }, rest);
      if (beforeId !== undefined) request.beforeId = beforeId;
      // the first page settles what "up to now" is; the older ones (before an id) only need URLs of their own
      let page = beforeId === undefined ? await this.currentPage(marketId, request, until) : await this.tradesPage(this.extend(request, { endTime: this.iso8601(this.endTime(marketId, until)) }));
      if (page.length === 0 && pages.length > 0) {
        // After a full page, an empty one means "exactly a multiple of 100"; ask once more (by
        // another URL: see the header), so that one silently empty answer cannot cut the walk short
        // (and leave a gap).
        if (spacing > 0) await this.sleep(spacing);
        page = await this.tradesPage(this.extend(request, { endTime: this.iso8601(this.endTime(marketId, until)), skip: 0 }));
      }
      pages.push(page);
      if (page.length < PAGE) break;
      beforeId = this.oldestId(page);
    }
    if (pages.length === 1) return this.parseTrades(pages[0] as unknown as Dict[], market, since, limit);
    // Oldest first; the walk is served a page at a time by the calls that follow.
    const seen = new Set<string>();
    const trades: BufferedTrade[] = [];
    for (const raw of pages.flat()) {
      if (seen.has(raw.id)) continue;
      seen.add(raw.id);
      trades.push({ time: this.parse8601(raw.tradedAt) ?? since, raw: raw as unknown as Dict });
    }
    trades.sort((a, b) => a.time - b.time);
    if (trades.length > pageSize) this.buffers.set(marketId, trades);
    return this.parseTrades(throughLastMillisecond(trades, pageSize).map((t) => t.raw), market, since);
  }

  /** The endTime of the next call for a market: `until`, or past the venue's clock and later than the last. */
  private endTime(marketId: string, until: number | undefined): number {
    if (until !== undefined) return until;
    const now = (venueNow(this) ?? this.milliseconds()) + END_TIME_AHEAD_MS;
    const end = Math.max(now, (this.lastEndTimes.get(marketId) ?? -Infinity) + 1);
    this.lastEndTimes.set(marketId, end);
    return end;
  }

  /**
   * The newest trades as of the venue's now: asked with an endTime past its clock as last seen,
   * and asked again when the answer's Date shows the venue's clock had reached that endTime (a
   * trade made since could be missing, and a short page would claim "caught up" wrongly).
   */
  private async currentPage(marketId: string, request: Dict, until: number | undefined): Promise<ValrTrade[]> {
    const spacing = this.safeInteger(this.options, 'callSpacingMs') ?? this.rateLimit ?? 0;
    for (let i = 1; ; i++) {
      if (i > 1 && spacing > 0) await this.sleep(spacing);
      const end = this.endTime(marketId, until);
      const page = await this.tradesPage(this.extend(request, { endTime: this.iso8601(end) }));
      const answeredAt = venueNow(this);
      if (until !== undefined || answeredAt === undefined || answeredAt + DATE_RESOLUTION_MS <= end || i === CLOCK_CATCH_UPS) return page;
    }
  }

  /** The id of a page's oldest trade (by time, then sequence), wherever it sits in the page. */
  private oldestId(page: ValrTrade[]): string {
    let oldest = page[0]!;
    for (const t of page) {
      const dt = (this.parse8601(t.tradedAt) ?? 0) - (this.parse8601(oldest.tradedAt) ?? 0);
      if (dt < 0 || (dt === 0 && BigInt(t.sequenceId) < BigInt(oldest.sequenceId))) oldest = t;
    }
    return oldest.id;
  }

  private async tradesPage(request: Dict): Promise<ValrTrade[]> {
    const response: unknown = await this.request('v1/public/{currencyPair}/trades', 'public', 'GET', request);
    if (!Array.isArray(response)) throw new BadResponse(`${this.id} fetchTrades: expected an array of trades`);
    return response as ValrTrade[];
  }

  override parseTrade(trade: Dict, market?: Market): Trade {
    const timestamp = this.parse8601(this.safeString(trade, 'tradedAt'));
    const resolved = this.safeMarket(this.safeString(trade, 'currencyPair'), market);
    return this.safeTrade(
      {
        info: trade,
        id: this.safeString(trade, 'id'),
        order: undefined,
        timestamp,
        datetime: this.iso8601(timestamp),
        symbol: resolved.symbol,
        type: undefined,
        side: this.safeStringLower(trade, 'takerSide'),
        takerOrMaker: 'taker',
        price: this.safeString(trade, 'price'),
        amount: this.safeString(trade, 'quantity'),
        cost: this.safeString(trade, 'quoteVolume'),
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
    if (code < 400 || code === 429 || code >= 500) return undefined;
    const message = this.safeString(response as Dict, 'message') ?? reason;
    const feedback = `${this.id} ${method} ${url} ${code} ${body}`;
    this.throwExactlyMatchedException(this.exceptions['exact'], this.safeString(response as Dict, 'code'), feedback);
    this.throwBroadlyMatchedException(this.exceptions['broad'], message, feedback);
    if (code === 400) throw new BadRequest(feedback);
    throw new ExchangeError(feedback);
  }
}

export const valr: Venue = {
  id: 'valr',
  rateLimitDocs: 'https://docs.valr.com/',
  // GET /v1/public/* is limited to 30 calls per minute (one per 2 s); we keep to one per 2.5 s.
  limits: { minTimeMs: 2500, maxConcurrent: 1 },
  pageSize: PAGE,
  // startTime reaches the whole public history: no published bound.
  historyMs: undefined,
  takesUntil: true,
  create(options: VenueOptions = {}) {
    const exchange = new Valr({
      ...baseConfig(options.timeoutMs),
      // Against the simulator the calls of one walk need no spacing.
      ...(options.simUrl ? { options: { callSpacingMs: 0 } } : {}),
    });
    if (options.simUrl) pointAtSim(exchange, options.simUrl);
    return exchange;
  },
};

// Raw payloads (https://docs.valr.com/, https://api-docs.rooibos.dev/).

/** GET /v1/public/pairs */
export interface ValrPair {
  symbol: string; // "BTCZAR"
  baseCurrency: string;
  quoteCurrency: string;
  shortName: string; // "BTC/ZAR"
  active: boolean;
  minBaseAmount: string;
  maxBaseAmount: string;
  minQuoteAmount: string;
  maxQuoteAmount: string;
  tickSize: string;
  baseDecimalPlaces: string;
  marginTradingAllowed?: boolean;
  currencyPairType?: 'SPOT' | 'FUTURE' | string;
}

/** GET /v1/public/BTCZAR/trades?limit=100&startTime=2026-11-20T10:00:00.000Z&endTime=2026-11-20T10:05:01.000Z (newest first). */
export interface ValrTrade {
  price: string;
  quantity: string; // base amount
  currencyPair: string;
  tradedAt: string; // ISO 8601, ms
  takerSide: 'buy' | 'sell';
  sequenceId: number | string; // an integer beyond 2^53: ccxt hands it over as a string of its digits
  id: string; // trade id (a UUID of version 7)
  quoteVolume?: string;
}
