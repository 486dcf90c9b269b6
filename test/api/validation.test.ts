// Every parameter of every endpoint, given something bad: a 400 (or the contract's code) in the
// error shape, naming the parameter; never a 5xx, never a stack trace or SQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;
beforeAll(async () => {
  t = await startTestApi({ hours: 2 });
});
afterAll(async () => {
  await t?.close();
});

const H = '/v1/rates/historical?pair=BTCNGN&start=2026-11-01&end=2026-11-02';
const LONG = 'A'.repeat(5000);

// [path, expected status, expected error code, text the message must contain]
const cases: Array<[string, number, string, string]> = [
  // live
  ['/v1/rates/live', 400, 'validation_error', 'pairs'],
  ['/v1/rates/live?pairs=', 400, 'validation_error', "query parameter 'pairs' must not be empty"],
  ['/v1/rates/live?pairs=,,', 400, 'validation_error', 'pairs'],
  ['/v1/rates/live?pairs=DOGENGN', 400, 'validation_error', 'DOGENGN'],
  ['/v1/rates/live?pairs=BTCUSDT', 400, 'validation_error', 'BTCUSDT'],
  [`/v1/rates/live?pairs=${LONG}`, 400, 'validation_error', "query parameter 'pairs' must be at most 500 characters (comma-separated pair identifiers)"],
  ['/v1/rates/live?pairs=BTCNGN&min_confidence=2', 400, 'validation_error', 'min_confidence'],
  ['/v1/rates/live?pairs=BTCNGN&min_confidence=abc', 400, 'validation_error', 'min_confidence'],
  ['/v1/rates/live?pairs=BTCNGN&include_sources=maybe', 400, 'validation_error', 'include_sources'],
  ['/v1/rates/live?pairs=BTCNGN&include_synthetic=2', 400, 'validation_error', 'include_synthetic'],
  ['/v1/rates/live?pairs=BTCNGN&include_audit=yes', 400, 'validation_error', 'include_audit'],
  ['/v1/rates/live?pairs=BTCNGN&pairs=ETHNGN', 400, 'validation_error', 'pairs'],
  ['/v1/rates/live?pairs=BTCNGN&colour=red', 400, 'validation_error', 'colour'],
  // historical
  ['/v1/rates/historical?start=2026-11-01&end=2026-11-02', 400, 'validation_error', 'pair'],
  ['/v1/rates/historical?pair=BTCNGN&end=2026-11-02', 400, 'validation_error', 'start'],
  ['/v1/rates/historical?pair=BTCNGN&start=2026-11-01', 400, 'validation_error', 'end'],
  ['/v1/rates/historical?pair=XXXYYY&start=2026-11-01&end=2026-11-02', 400, 'validation_error', 'XXXYYY'],
  ['/v1/rates/historical?pair=BTCNGN&start=2026-13-01&end=2026-11-02', 400, 'validation_error', 'start'],
  ['/v1/rates/historical?pair=BTCNGN&start=01-11-2026&end=2026-11-02', 400, 'validation_error', 'start'],
  ['/v1/rates/historical?pair=BTCNGN&start=2026-11-01&end=2026-02-30', 400, 'validation_error', 'end'],
  ['/v1/rates/historical?pair=BTCNGN&start=2026-11-05&end=2026-11-02', 400, 'validation_error', 'end'],
  [`${H}&interval=30m`, 400, 'validation_error', 'interval'],
  [`${H}&limit=0`, 400, 'validation_error', 'limit'],
  [`${H}&limit=-5`, 400, 'validation_error', 'limit'],
  [`${H}&limit=10001`, 400, 'validation_error', 'limit'],
  [`${H}&limit=1.5`, 400, 'validation_error', 'limit'],
  [`${H}&limit=ten`, 400, 'validation_error', 'limit'],
  [`${H}&cursor=yesterday`, 400, 'validation_error', 'cursor'],
  [`${H}&cursor=2026-10-01T00:00:00%2B00:00`, 400, 'validation_error', 'cursor'],
  [`${H}&cursor=${LONG}`, 400, 'validation_error', 'cursor'],
  [`${H}&page=2`, 400, 'validation_error', 'page'],
  // eod
  ['/v1/rates/eod?pair=BTCNGN', 400, 'validation_error', 'date'],
  ['/v1/rates/eod?date=2026-11-01', 400, 'validation_error', 'pair'],
  ['/v1/rates/eod?pair=BTCNGN&date=2026-11-31', 400, 'validation_error', 'date'],
  ['/v1/rates/eod?pair=NOPE12&date=2026-11-01', 400, 'validation_error', "'pair'"],
  // spread, premium, indices
  ['/v1/rates/spread', 400, 'validation_error', 'pair'],
  ['/v1/rates/spread?pair=BTC', 400, 'validation_error', 'pair'],
  ['/v1/premium', 400, 'validation_error', 'pair'],
  ['/v1/premium?pair=BTCNGN&interval=1w', 400, 'validation_error', 'interval'],
  ['/v1/premium?pair=BTCNGN&start=2026-11-05&end=2026-11-01', 400, 'validation_error', 'end'],
  ['/v1/premium?pair=BTCNGN&start=2020-01-01&end=2026-11-01', 400, 'validation_error', 'range'],
  ['/v1/premium?pair=BTCNGN&start=20261101', 400, 'validation_error', 'start'],
  ['/v1/indices?index=SP500', 400, 'validation_error', 'index'],
  // parameterless endpoints refuse parameters they don't have
  ['/v1/pairs?verbose=1', 400, 'validation_error', 'verbose'],
  ['/v1/status?pair=BTCNGN', 400, 'validation_error', 'pair'],
  ['/v1/rates/markets?pairs=BTCNGN', 400, 'validation_error', 'pairs'],
  // certificates
  ['/v1/certificates/NOPE12', 400, 'validation_error', "'pair'"],
  ['/v1/certificates/NOPENG', 400, 'validation_error', 'NOPENG'],
  ['/v1/certificates/BTCNGN?limit=1001', 400, 'validation_error', 'limit'],
  ['/v1/certificates/BTCNGN?limit=0', 400, 'validation_error', 'limit'],
  ['/v1/certificates/BTCNGN?start=2026-11-09&end=2026-11-01', 400, 'validation_error', 'end'],
  ['/v1/certificates/BTCNGN?start=last-week', 400, 'validation_error', 'start'],
  ['/v1/certificates/BTCNGN/yesterday', 400, 'validation_error', 'timestamp'],
  ['/v1/certificates/BTCNGN/2026-11-01T00:00:00-05:00', 400, 'validation_error', 'timestamp'],
  ['/v1/certificates/BTCNGN/2026-11-01T00:02:00%2B00:00', 404, 'not_found', '5-minute'],
  ['/v1/certificates/BTCNGN/2020-11-01T00:05:00%2B00:00', 404, 'not_found', 'BTCNGN'],
  // path parameters say what they are, in plain words
  ['/v1/account/webhooks/abc/deliveries', 400, 'validation_error', "path parameter 'id' must be an endpoint id (a number, from GET /v1/account/webhooks)"],
];

describe('bad parameters', () => {
  it.each(cases)('%s -> %i %s', async (path, status, code, mention) => {
    const res = await t.get(path, await t.key('enterprise'));
    expect(res.status, JSON.stringify(res.body)).toBe(status);
    expect(res.body.error).toBe(code);
    expect(res.body.status).toBe(status);
    expect(res.body.message).toContain(mention);
    expect(JSON.stringify(res.body)).not.toMatch(/SELECT|at .*\.ts:\d+|postgres/i);
  });

  it('refuses a malformed X-API-Key without touching the database', async () => {
    const res = await t.get('/v1/pairs', "x' OR '1'='1");
    expect(res.status).toBe(401);
  });
});
