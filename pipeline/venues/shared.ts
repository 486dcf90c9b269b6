// Helpers every venue adapter uses: pointing a ccxt exchange at the simulated market, refusing
// bodies that are not JSON, and knowing the venue's clock (from its HTTP Date header).
import type { Dict } from 'ccxt';
import { BadResponse, Exchange } from '../ccxt.js';

/**
 * Rewrites every REST url of a ccxt exchange to the simulated market, keeping the venue's real
 * path layout: https://api.luno.com/api -> ${simUrl}/luno/api,
 * https://api.binance.com/api/v3 -> ${simUrl}/binance/api/v3, https://api.valr.com -> ${simUrl}/valr.
 */
export function pointAtSim(exchange: Exchange, simUrl: string): void {
  const root = `${simUrl.replace(/\/+$/, '')}/${exchange.id}`;
  const rewrite = (value: unknown): unknown => {
    if (typeof value === 'string') {
      const url = new URL(value);
      return root + url.pathname.replace(/\/+$/, '');
    }
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
    }
    return value;
  };
  exchange.urls = { ...exchange.urls, api: rewrite(exchange.urls.api) as Exchange['urls']['api'] };
}

/** Base of our own (non-ccxt) venue classes: public GETs, parameters in the path, the rest as query. */
export abstract class PublicRestExchange extends Exchange {
  override sign(path: string, api: string = 'public', method: string = 'GET', params: Dict = {}, headers?: Dict, body?: string): Dict {
    let url = `${(this.urls.api as Dict)[api] as string}/${this.implodeParams(path, params)}`;
    const query = this.omit(params, this.extractParams(path));
    if (Object.keys(query).length > 0) url += `?${this.urlencode(query)}`;
    return { url, method, body, headers };
  }
}

/** What our own (non-ccxt) venue classes can do: public spot markets and trades, nothing else. */
export const PUBLIC_TRADES_ONLY = {
  CORS: undefined,
  spot: true,
  margin: false,
  swap: false,
  future: false,
  option: false,
  publicAPI: true,
  privateAPI: false,
  fetchCurrencies: false,
  fetchMarkets: true,
  fetchTrades: true,
  fetchTicker: false,
  fetchOrderBook: false,
  fetchOHLCV: false,
} as const;

const CLOCK_OFFSET = 'afratesVenueClockOffsetMs';

/**
 * Call first thing in a venue's handleErrors (ccxt calls it for every response): remembers the
 * venue's clock from the Date header, and turns a 2xx whose body is not JSON into BadResponse
 * (ccxt would otherwise hand the raw text to the parser, which reads it as "no trades").
 */
export function inspectResponse(
  exchange: Exchange,
  status: number,
  url: string,
  headers: Record<string, string> | undefined,
  body: string,
  response: unknown,
): void {
  const date = headers?.Date ?? headers?.date;
  if (date !== undefined) {
    const t = Date.parse(date);
    if (Number.isFinite(t)) exchange.options[CLOCK_OFFSET] = t - exchange.milliseconds();
  }
  if (status >= 200 && status < 300 && (response === undefined || response === null)) {
    const excerpt = body.length > 120 ? `${body.slice(0, 120)}...` : body;
    throw new BadResponse(`${exchange.id} GET ${url}: HTTP ${status} with a body that is not JSON: ${JSON.stringify(excerpt)}`);
  }
}

/** The venue's clock (our clock plus the offset seen in its last Date header), or undefined before any response. */
export function venueNow(exchange: Exchange): number | undefined {
  const offset = exchange.options[CLOCK_OFFSET] as number | undefined;
  return offset === undefined ? undefined : exchange.milliseconds() + offset;
}

/** Options every venue's ccxt instance gets. */
export function baseConfig(timeoutMs: number | undefined): Record<string, unknown> {
  return {
    enableRateLimit: false, // bottleneck paces calls outside ccxt
    timeout: timeoutMs ?? 10_000,
    // numbers as the venue wrote them (decimal strings), never through a binary float: a stored
    // trade is exactly what the venue reported, to the last digit
    number: String,
  };
}
