// Coinbase's keyless exchange rates: https://api.coinbase.com/v2/exchange-rates?currency=USD
// Docs: https://docs.cdp.coinbase.com/coinbase-app/track-apis/exchange-rates (public, no key;
// rates refresh about every minute).
// Body: {"data":{"currency":"USD","rates":{"NGN":"1530.12",...}}}: units per USD as decimal
// strings. The body has no update time, so the response's Date header stands for it (else the
// moment we received it).
import { FxSourceError, getJson, isRecord, observe, type FxFetchOptions, type FxObservation } from './common.js';

export const COINBASE_ORIGIN = 'https://api.coinbase.com';

export async function fetchCoinbase(options: FxFetchOptions = {}): Promise<FxObservation> {
  const source = 'coinbase' as const;
  const base = (options.baseUrl ?? COINBASE_ORIGIN).replace(/\/+$/, '');
  const url = `${base}/v2/exchange-rates?currency=USD`;
  const { body, headers } = await getJson(source, url, options.timeoutMs ?? 10_000);
  const observedAt = new Date((options.now ?? Date.now)());
  const date = Date.parse(headers.get('date') ?? '');
  const sourceUpdatedAt = Number.isFinite(date) ? new Date(date) : observedAt;
  if (!isRecord(body) || !isRecord(body.data)) throw new FxSourceError(source, 'body has no "data" object');
  if (body.data.currency !== 'USD') {
    throw new FxSourceError(source, `data.currency is ${JSON.stringify(body.data.currency)}, expected "USD"`);
  }
  const table = body.data.rates;
  if (!isRecord(table)) throw new FxSourceError(source, 'data.rates is not an object');
  return observe(source, table, { currencies: options.currencies, sourceUpdatedAt, observedAt });
}
