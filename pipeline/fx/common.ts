// What the FX sources share: the observation type, the currencies afrates needs, and a JSON GET
// with a timeout whose every failure is an Error naming the source.

export type FxSourceId = 'exchangerate_api' | 'coinbase';

/** The currencies afrates publishes against: units of each per 1 USD. */
export const FX_CURRENCIES = ['NGN', 'ZAR', 'KES', 'GHS', 'UGX'] as const;

export interface FxRate {
  readonly currency: string;
  /**
   * Units of the currency per 1 USD (USD/NGN = 1530 means 1 USD buys 1530 NGN), a plain decimal as
   * the source wrote it (a JSON number: the shortest text that reads back to it), stored as it is.
   */
  readonly unitsPerUsd: string;
  /** The source's own update time: what freshness is judged by. */
  readonly sourceUpdatedAt: Date;
}

export interface FxObservation {
  readonly source: FxSourceId;
  /** When we received it. */
  readonly observedAt: Date;
  readonly rates: FxRate[];
  /** Requested currencies the source did not quote this time (stored rates are the others). */
  readonly missing: readonly string[];
}

export interface FxFetchOptions {
  /** Replaces the source's origin (e.g. `${simUrl}/coinbase` for https://api.coinbase.com). */
  readonly baseUrl?: string;
  /** Per-request timeout, ms (default 10 s). */
  readonly timeoutMs?: number;
  /** Currencies to return (default FX_CURRENCIES); each must be present and valid. */
  readonly currencies?: readonly string[];
  /** Clock for observedAt (default Date.now). */
  readonly now?: () => number;
}

export class FxSourceError extends Error {
  constructor(
    readonly source: FxSourceId,
    message: string,
  ) {
    super(`${source}: ${message}`);
    this.name = 'FxSourceError';
  }
}

/** GETs a JSON body; throws FxSourceError on timeouts, network errors, HTTP errors and bodies that are not JSON. */
export async function getJson(source: FxSourceId, url: string, timeoutMs: number): Promise<{ body: unknown; headers: Headers }> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    const err = e as Error;
    if (err.name === 'TimeoutError' || err.name === 'AbortError') {
      throw new FxSourceError(source, `GET ${url} timed out after ${timeoutMs} ms`);
    }
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new FxSourceError(source, `GET ${url} failed: ${cause ?? err.message}`);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (e) {
    const err = e as Error;
    const what = err.name === 'TimeoutError' || err.name === 'AbortError' ? `timed out after ${timeoutMs} ms` : err.message;
    throw new FxSourceError(source, `GET ${url}: reading the body ${what}`);
  }
  if (!res.ok) {
    throw new FxSourceError(source, `GET ${url}: HTTP ${res.status}${text ? ` ${excerpt(text)}` : ''}`);
  }
  try {
    return { body: JSON.parse(text), headers: res.headers };
  } catch {
    throw new FxSourceError(source, `GET ${url}: body is not JSON: ${excerpt(text)}`);
  }
}

const PLAIN_DECIMAL = /^\d{1,20}(\.\d{1,30})?$/;

/**
 * A rate as the positive decimal the source sent: its text when it sent text (no digit lost to a
 * double), or a JSON number's shortest text; else an FxSourceError naming what was wrong.
 */
export function positiveRate(source: FxSourceId, currency: string, raw: unknown): string {
  const text = typeof raw === 'number' && Number.isFinite(raw) ? plainNumber(raw) : typeof raw === 'string' ? raw.trim() : null;
  if (text === null || !PLAIN_DECIMAL.test(text) || !/[1-9]/.test(text)) {
    throw new FxSourceError(source, `rate for ${currency} is not a positive number: ${JSON.stringify(raw)}`);
  }
  return text;
}

/** A JSON number as a plain decimal: its shortest text, without an exponent. */
function plainNumber(n: number): string {
  const text = String(n);
  return /e/i.test(text) && n > 0 ? n.toFixed(20).replace(/\.?0+$/, '') : text;
}

/**
 * The observation of the requested currencies in a source's table of units per USD. One currency
 * gone from the table must not cost the others: it is reported missing and the rest kept; with none
 * left the source failed.
 */
export function observe(source: FxSourceId, table: Record<string, unknown>, o: { currencies?: readonly string[]; sourceUpdatedAt: Date; observedAt: Date }): FxObservation {
  const rates: FxRate[] = [];
  const missing: string[] = [];
  for (const currency of o.currencies ?? FX_CURRENCIES) {
    if (currency in table) rates.push({ currency, unitsPerUsd: positiveRate(source, currency, table[currency]), sourceUpdatedAt: o.sourceUpdatedAt });
    else missing.push(currency);
  }
  if (rates.length === 0) throw new FxSourceError(source, `no rate for ${missing.join(', ')}`);
  return { source, observedAt: o.observedAt, rates, missing };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function excerpt(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}...` : text);
}
