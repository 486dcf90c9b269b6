// ExchangeRate-API's keyless open endpoint: https://open.er-api.com/v6/latest/USD
// Docs: https://www.exchangerate-api.com/docs/free (updates once a day; rate limited, 429 when
// called too often; attribution required by its terms).
// Body: {"result":"success","time_last_update_unix":..., "base_code":"USD","rates":{"NGN":1530.1,...}}
// The rates are units per USD already; time_last_update_unix is the source's update time.
import { FxSourceError, getJson, isRecord, observe, type FxFetchOptions, type FxObservation } from './common.js';

export const EXCHANGERATE_API_ORIGIN = 'https://open.er-api.com';

export async function fetchExchangeRateApi(options: FxFetchOptions = {}): Promise<FxObservation> {
  const source = 'exchangerate_api' as const;
  const base = (options.baseUrl ?? EXCHANGERATE_API_ORIGIN).replace(/\/+$/, '');
  const url = `${base}/v6/latest/USD`;
  const { body } = await getJson(source, url, options.timeoutMs ?? 10_000);
  const observedAt = new Date((options.now ?? Date.now)());
  if (!isRecord(body)) throw new FxSourceError(source, 'body is not a JSON object');
  if (body.result !== 'success') {
    throw new FxSourceError(source, `result is ${JSON.stringify(body.result)}${body['error-type'] ? ` (${String(body['error-type'])})` : ''}`);
  }
  if (body.base_code !== 'USD') throw new FxSourceError(source, `base_code is ${JSON.stringify(body.base_code)}, expected "USD"`);
  const updated = body.time_last_update_unix;
  if (typeof updated !== 'number' || !Number.isFinite(updated) || updated <= 0) {
    throw new FxSourceError(source, `time_last_update_unix is not a positive number: ${JSON.stringify(updated)}`);
  }
  const sourceUpdatedAt = new Date(updated * 1000);
  if (!isRecord(body.rates)) throw new FxSourceError(source, '"rates" is not an object');
  return observe(source, body.rates, { currencies: options.currencies, sourceUpdatedAt, observedAt });
}
