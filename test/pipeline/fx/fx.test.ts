// The FX fetchers: against the simulated market (its real wire formats), and against bodies that
// are wrong in every way we could think of. Never NaN, never a non-positive rate, always an Error
// that names the source.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  FX_CURRENCIES,
  FxSourceError,
  coinbase,
  exchangeRateApi,
  fetchCoinbase,
  fetchExchangeRateApi,
  fxSources,
} from '../../../pipeline/fx/index.js';
import { startSimMarket, type SimMarket } from '../../../sim/index.js';

const CLOCK = Date.UTC(2026, 10, 20, 12, 34, 56);

describe('against the simulated market', () => {
  let sim: SimMarket;
  beforeAll(async () => {
    sim = await startSimMarket({ seed: 5, now: () => CLOCK, historyStart: CLOCK - 60_000 });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  afterEach(() => {
    for (const v of ['exchangerate-api', 'coinbase']) sim.setFault(v, null);
  });

  it('ExchangeRate-API: five currencies per USD, dated by time_last_update_unix (daily)', async () => {
    const obs = await fetchExchangeRateApi({ baseUrl: `${sim.url}/exchangerate-api`, now: () => CLOCK + 5 });
    expect(obs.source).toBe('exchangerate_api');
    expect(obs.observedAt.getTime()).toBe(CLOCK + 5);
    expect(obs.rates.map((r) => r.currency)).toEqual([...FX_CURRENCIES]);
    for (const r of obs.rates) {
      expect(r.unitsPerUsd).toMatch(/^\d+(\.\d+)?$/);
      expect(r.sourceUpdatedAt.toISOString()).toBe('2026-11-20T00:00:02.000Z');
    }
    const ngn = Number(obs.rates.find((r) => r.currency === 'NGN')!.unitsPerUsd);
    expect(ngn).toBeGreaterThan(1300);
    expect(ngn).toBeLessThan(1750);
  });

  it('Coinbase: five currencies per USD from decimal strings, dated by the Date header', async () => {
    const obs = await fetchCoinbase({ baseUrl: `${sim.url}/coinbase` });
    expect(obs.source).toBe('coinbase');
    expect(obs.rates.map((r) => r.currency)).toEqual([...FX_CURRENCIES]);
    for (const r of obs.rates) {
      expect(r.unitsPerUsd).toMatch(/^\d+(\.\d+)?$/);
      expect(r.sourceUpdatedAt.getTime()).toBe(CLOCK - (CLOCK % 1000)); // the header has whole seconds
    }
  });

  it('the two sources agree to within a percent but are not identical', async () => {
    const [a, b] = await Promise.all(fxSources.map((s) => s.fetch({ simUrl: sim.url })));
    expect(a!.source).toBe('exchangerate_api');
    expect(b!.source).toBe('coinbase');
    let differ = false;
    for (const currency of FX_CURRENCIES) {
      const x = Number(a!.rates.find((r) => r.currency === currency)!.unitsPerUsd);
      const y = Number(b!.rates.find((r) => r.currency === currency)!.unitsPerUsd);
      expect(Math.abs(x / y - 1), currency).toBeLessThan(0.02);
      if (x !== y) differ = true;
    }
    expect(differ).toBe(true);
  });

  it('the sources map a simUrl to their prefix', async () => {
    expect(exchangeRateApi.id).toBe('exchangerate_api');
    expect(coinbase.id).toBe('coinbase');
    expect((await coinbase.fetch({ simUrl: `${sim.url}/` })).rates).toHaveLength(5);
  });

  const faults: Array<[string, RegExp]> = [
    ['malformed', /not JSON/],
    ['server_error', /HTTP 500/],
    ['rate_limit', /HTTP 429/],
    ['timeout', /timed out after 200 ms/],
    ['silent', /no rate for NGN, ZAR, KES, GHS, UGX/],
  ];
  for (const [kind, message] of faults) {
    it(`${kind}: both sources reject with an error naming the source`, async () => {
      sim.setFault('exchangerate-api', { kind: kind as 'malformed' });
      sim.setFault('coinbase', { kind: kind as 'malformed' });
      const er = fetchExchangeRateApi({ baseUrl: `${sim.url}/exchangerate-api`, timeoutMs: 200 });
      const cb = fetchCoinbase({ baseUrl: `${sim.url}/coinbase`, timeoutMs: 200 });
      await expect(er).rejects.toThrow(FxSourceError);
      await expect(er).rejects.toThrow(new RegExp(`^exchangerate_api: .*${message.source}`));
      await expect(cb).rejects.toThrow(new RegExp(`^coinbase: .*${message.source}`));
    });
  }
});

describe('bodies', () => {
  let server: Server;
  let url: string;
  let respond: { status: number; body: string; date?: string } = { status: 200, body: '{}' };

  beforeAll(async () => {
    server = createServer((_req, res) => {
      res.sendDate = false;
      res.writeHead(respond.status, { 'Content-Type': 'application/json', ...(respond.date ? { Date: respond.date } : {}) });
      res.end(respond.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  });

  const erApi = (rates: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ result: 'success', time_last_update_unix: 1795132802, base_code: 'USD', rates: { USD: 1, ...rates }, ...extra });
  const good = { NGN: 1530.5, ZAR: 18.1, KES: 129.2, GHS: 15.3, UGX: 3650 };
  const cb = (rates: Record<string, unknown>) => JSON.stringify({ data: { currency: 'USD', rates } });

  it('accepts a well-formed ExchangeRate-API body', async () => {
    respond = { status: 200, body: erApi(good) };
    const obs = await fetchExchangeRateApi({ baseUrl: url });
    expect(obs.rates.find((r) => r.currency === 'NGN')).toEqual({ currency: 'NGN', unitsPerUsd: '1530.5', sourceUpdatedAt: new Date(1795132802000) });
  });

  it('keeps the currencies a source still quotes and names the missing ones', async () => {
    respond = { status: 200, body: erApi({ NGN: 1530, ZAR: 18 }) };
    const er = await fetchExchangeRateApi({ baseUrl: url });
    expect(er.rates.map((r) => r.currency)).toEqual(['NGN', 'ZAR']);
    expect(er.missing).toEqual(['KES', 'GHS', 'UGX']);
    respond = { status: 200, body: cb({ NGN: '1530' }) };
    const c = await fetchCoinbase({ baseUrl: url });
    expect(c.rates.map((r) => r.currency)).toEqual(['NGN']);
    expect(c.missing).toEqual(['ZAR', 'KES', 'GHS', 'UGX']);
  });

  const badErApi: Array<[string, string, RegExp]> = [
    ['a negative rate', erApi({ ...good, KES: -129 }), /rate for KES is not a positive number: -129/],
    ['a zero rate', erApi({ ...good, GHS: 0 }), /rate for GHS is not a positive number: 0/],
    ['a rate that is not a number', erApi({ ...good, NGN: 'abc' }), /rate for NGN is not a positive number: "abc"/],
    ['a null rate', erApi({ ...good, UGX: null }), /rate for UGX is not a positive number: null/],
    ['no currency at all', erApi({ EUR: 0.9 }), /no rate for NGN, ZAR, KES, GHS, UGX/],
    ['result error', JSON.stringify({ result: 'error', 'error-type': 'unsupported-code' }), /result is "error" \(unsupported-code\)/],
    ['another base', erApi(good, { base_code: 'EUR' }), /base_code is "EUR"/],
    ['no update time', erApi(good, { time_last_update_unix: undefined }), /time_last_update_unix/],
    ['rates that are not an object', erApi({}, { rates: [1, 2] }), /"rates" is not an object/],
    ['a JSON array', '[]', /not a JSON object/],
    ['an empty body', '', /not JSON/],
  ];
  for (const [what, body, message] of badErApi) {
    it(`ExchangeRate-API rejects ${what}`, async () => {
      respond = { status: 200, body };
      await expect(fetchExchangeRateApi({ baseUrl: url })).rejects.toThrow(message);
    });
  }

  it('HTTP errors name the source and the status', async () => {
    respond = { status: 503, body: '<html>busy</html>' };
    await expect(fetchExchangeRateApi({ baseUrl: url })).rejects.toThrow(/^exchangerate_api: GET .* HTTP 503/);
    await expect(fetchCoinbase({ baseUrl: url })).rejects.toThrow(/^coinbase: GET .* HTTP 503/);
  });

  it('an unreachable source is an error naming it', async () => {
    await expect(fetchCoinbase({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 500 })).rejects.toThrow(/^coinbase: GET .* failed/);
  });

  it('Coinbase: string and number rates, each kept as the decimal it was sent as; the Date header, else the time received', async () => {
    // 1530.1234567890123456 has more digits than a double holds: kept as sent, not rounded
    respond = { status: 200, body: cb({ NGN: '1530.1234567890123456', ZAR: 18.2, KES: '129.30', GHS: '15.4', UGX: '3650', EUR: '0.92' }), date: 'Fri, 20 Nov 2026 12:00:00 GMT' };
    const obs = await fetchCoinbase({ baseUrl: url });
    expect(obs.rates.map((r) => [r.currency, r.unitsPerUsd])).toEqual([
      ['NGN', '1530.1234567890123456'],
      ['ZAR', '18.2'],
      ['KES', '129.30'],
      ['GHS', '15.4'],
      ['UGX', '3650'],
    ]);
    expect(obs.rates[0]!.sourceUpdatedAt.toISOString()).toBe('2026-11-20T12:00:00.000Z');
    respond = { ...respond, date: undefined };
    const undated = await fetchCoinbase({ baseUrl: url, now: () => CLOCK });
    expect(undated.rates[0]!.sourceUpdatedAt.getTime()).toBe(CLOCK);
    expect(undated.observedAt.getTime()).toBe(CLOCK);
  });

  const badCoinbase: Array<[string, string, RegExp]> = [
    ['a negative rate', cb({ ...good, NGN: '-1530' }), /rate for NGN is not a positive number: "-1530"/],
    ['an empty string', cb({ ...good, ZAR: '' }), /rate for ZAR is not a positive number: ""/],
    ['Infinity', cb({ ...good, KES: 'Infinity' }), /rate for KES is not a positive number: "Infinity"/],
    ['no currency at all', cb({ EUR: '0.9' }), /no rate for NGN, ZAR, KES, GHS, UGX/],
    ['no data', JSON.stringify({ errors: [{ id: 'x' }] }), /no "data" object/],
    ['another currency', JSON.stringify({ data: { currency: 'EUR', rates: good } }), /data.currency is "EUR"/],
    ['broken JSON', '{"data":{"currency":"USD","rates":{"NGN":"15', /not JSON/],
  ];
  for (const [what, body, message] of badCoinbase) {
    it(`Coinbase rejects ${what}`, async () => {
      respond = { status: 200, body };
      await expect(fetchCoinbase({ baseUrl: url })).rejects.toThrow(message);
    });
  }
});
