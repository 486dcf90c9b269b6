// The two keyless FX sources as the simulator serves them.
//
// ExchangeRate-API's open endpoint under /exchangerate-api (https://www.exchangerate-api.com/docs/free):
//   GET /v6/latest/USD   {"result":"success", ..., "time_last_update_unix", "time_next_update_unix",
//                         "base_code":"USD", "rates":{"USD":1,"NGN":1530.1,...}}
//   It updates about once a day; errors are {"result":"error","error-type":"..."}.
//
// Coinbase's exchange rates under /coinbase (https://docs.cdp.coinbase.com/coinbase-app/track-apis/exchange-rates):
//   GET /v2/exchange-rates?currency=USD   {"data":{"currency":"USD","rates":{"NGN":"1530.12",...}}}
//   Rates are decimal strings, near real time; the body carries no update time (the Date header does).
//   Errors are {"errors":[{"id","message"}]}.
import { decimal, type FxSnapshot } from '../types.js';
import type { Wire, WireContext, WireResponse } from '../wire.js';

function rfc2822(ms: number): string {
  // 'Thu, 28 May 2026 00:00:02 +0000', as the open endpoint prints it.
  return new Date(ms).toUTCString().replace('GMT', '+0000');
}

function shapedRates(snapshot: FxSnapshot | undefined, ctx: WireContext): Array<[string, number]> {
  const entries = Object.entries(snapshot?.rates ?? { USD: 1 });
  return ctx.shape(entries);
}

export const exchangeRateApiWire: Wire = {
  prefix: 'exchangerate-api',
  handle(req, ctx): WireResponse {
    const s = req.segments;
    if (req.method !== 'GET' || s.length !== 3 || s[0] !== 'v6' || s[1] !== 'latest') {
      return { status: 404, body: { result: 'error', 'error-type': 'unknown-endpoint' } };
    }
    if (s[2] !== 'USD') return { status: 404, body: { result: 'error', 'error-type': 'unsupported-code' } };
    const snapshot = ctx.source.fx('exchangerate_api', ctx.now);
    const updatedAt = snapshot?.updatedAt ?? ctx.now;
    const nextAt = updatedAt + 24 * 60 * 60 * 1000;
    return {
      status: 200,
      body: {
        result: 'success',
        provider: 'https://www.exchangerate-api.com',
        documentation: 'https://www.exchangerate-api.com/docs/free',
        terms_of_use: 'https://www.exchangerate-api.com/terms',
        time_last_update_unix: Math.floor(updatedAt / 1000),
        time_last_update_utc: rfc2822(updatedAt),
        time_next_update_unix: Math.floor(nextAt / 1000),
        time_next_update_utc: rfc2822(nextAt),
        time_eol_unix: 0,
        base_code: 'USD',
        rates: Object.fromEntries(shapedRates(snapshot, ctx)),
      },
    };
  },
  error(kind) {
    return kind === 'rate_limit'
      ? { status: 429, body: { result: 'error', 'error-type': 'too-many-requests' } }
      : { status: 500, body: { result: 'error', 'error-type': 'internal-error' } };
  },
};

export const coinbaseWire: Wire = {
  prefix: 'coinbase',
  handle(req, ctx): WireResponse {
    if (req.method !== 'GET' || req.segments.join('/') !== 'v2/exchange-rates') {
      return { status: 404, body: { errors: [{ id: 'not_found', message: 'Not found' }] } };
    }
    const currency = (req.query.get('currency') ?? 'USD').toUpperCase();
    if (currency !== 'USD') {
      return { status: 400, body: { errors: [{ id: 'invalid_request', message: `Invalid currency (${currency})` }] } };
    }
    const snapshot = ctx.source.fx('coinbase', ctx.now);
    const rates = Object.fromEntries(shapedRates(snapshot, ctx).map(([code, rate]) => [code, decimal(rate)]));
    return { status: 200, body: { data: { currency: 'USD', rates } } };
  },
  error(kind) {
    return kind === 'rate_limit'
      ? { status: 429, body: { errors: [{ id: 'rate_limit_exceeded', message: 'Too many requests' }] } }
      : { status: 500, body: { errors: [{ id: 'internal_server_error', message: 'Internal server error' }] } };
  },
};
