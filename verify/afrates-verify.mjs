#!/usr/bin/env node
// afrates-verify.mjs: checks an afrates certificate or fixing against its replication bundle and
// the transparency log, alone; and, as a monitor, that the log only grew since a head you kept.
//
// Needs Node 18 or later and nothing else (no npm install): it is written from the published
// methodology (https://<afrates>/methodology, sections 4 to 16) and RFC 9162, not from the
// service's code. Numbers are recomputed with exact rational arithmetic over BigInt from the
// bundle's decimal strings, never binary floating point, and rounded once, half-even, as the
// methodology says.
//
//   node afrates-verify.mjs --certificate cert.json --bundle bundle.json [--keys keys.json] [--head head.json --proof proof.json]
//   node afrates-verify.mjs --url https://api.afrates.example --key API_KEY --pair BTCNGN --time 2026-11-24T10:05:00+00:00
//   node afrates-verify.mjs --url https://api.afrates.example --key API_KEY --pair BTCNGN --fixing local --date 2026-11-24
//   node afrates-verify.mjs --monitor --url https://api.afrates.example --head saved-head.json [--keys keys.json] [--save]
//
// Each check prints one line, `ok <check>: ...`, `FAIL <check>: ...` or `skip <check>: ...` (a
// check that needs something not given, such as the HMAC secret), then the result. Exit status:
// 0 when every check holds, 1 when any fails, 2 for a usage error.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';

const USAGE = `usage:
  node afrates-verify.mjs --certificate FILE --bundle FILE [--keys FILE] [--head FILE --proof FILE | --no-log] [--hmac-secret SECRET]
  node afrates-verify.mjs --url BASE_URL --key API_KEY --pair PAIR --time TIMESTAMP [--no-log] [--hmac-secret SECRET]
  node afrates-verify.mjs --url BASE_URL --key API_KEY --pair PAIR --fixing local|utc --date YYYY-MM-DD [--no-log] [--hmac-secret SECRET]
  node afrates-verify.mjs --monitor --url BASE_URL --head FILE [--keys FILE] [--save]

  --certificate FILE  the certificate (GET /v1/certificates/{pair}/{timestamp}), or a fixing's
                      signed record (the "certificate" of a fixing in GET /v1/fixings/{pair}/{date})
  --bundle FILE       its replication bundle (GET .../bundle), plain or gzip
  --keys FILE         the signing keys (GET /v1/certificates/keys); without it the Ed25519 checks fail
                      (with --monitor: keys saved earlier, else fetched from --url)
  --head FILE         a signed tree head of the transparency log (GET /v1/transparency/head)
  --proof FILE        the inclusion proof at that head's size (GET /v1/transparency/proof/inclusion?id=ID&tree_size=N)
  --no-log            skip the transparency log checks
  --hmac-secret S     the server's HMAC secret, to check audit.signature too (else skipped)
  --url BASE_URL      fetch everything from this afrates API (the log's newest head and proof too)
  --key API_KEY       an Enterprise key for --url
  --pair PAIR         e.g. BTCNGN
  --time TIMESTAMP    a certificate's bucket start, e.g. 2026-11-24T10:05:00+00:00
  --fixing KIND       a fixing instead: local (16:00 in the quote currency's zone) or utc (00:00 UTC)
  --date YYYY-MM-DD   the fixing's day
  --monitor           check that the log only grew since the head in --head (no API key needed)
  --save              with --monitor: after a success, write the current head into --head

Exit status: 0 every check holds, 1 a check failed, 2 usage error.`;

// ---- The published parameters this verifier knows (methodology 1.0.0, its parameter table) ----

const METHODOLOGY = '1.0.0';
const PUBLISHED = {
  bucket_seconds: 300,
  rate_significant_digits: 12,
  rounding: 'half_even',
  divergence_pct_decimals: 4,
  confidence_decimals: 3,
  outlier_limit: 0.05,
  outlier_min_venues: 3,
  verified_pct: 2,
  caution_pct: 5,
  verified_pct_ngn: 5,
  caution_pct_ngn: 10,
  fresh_seconds: 900,
  stale_seconds: 3600,
  live_window_hours: 24,
  synthetic_lookback_hours: 1,
  fx_fresh_hours: 36,
  fx_fallback_hours: 720,
  agreement: 0.005,
  dispersion_scale: 0.01,
  age_grace_seconds: 300,
  age_decay_seconds: 3600,
  restatement_threshold_pct: 0.2,
  restatement_window_hours: 24,
  fixing_local_time: '16:00',
  fixing_utc_time: '00:00',
  fixing_window_minutes: 60,
  fixing_lookback_hours: 48,
};
/** An operator setting, served as in force: any value is allowed; it changes when a bucket settles, not its rate. */
const OPERATOR_SETTINGS = new Set(['settle_after_seconds']);
/** The parameters used as exact fractions or percents (the others are counts, digits and seconds). */
const EXACT = ['outlier_limit', 'verified_pct', 'caution_pct', 'verified_pct_ngn', 'caution_pct_ngn', 'agreement', 'dispersion_scale'];
/** Each quote currency's home zone (IANA), where its local fixing is taken (methodology section 14). */
const QUOTE_ZONES = { NGN: 'Africa/Lagos', ZAR: 'Africa/Johannesburg', KES: 'Africa/Nairobi', GHS: 'Africa/Accra', UGX: 'Africa/Kampala' };

// ---- Exact rationals: { n, d } of BigInt, d > 0, in lowest terms ----

const gcd = (a, b) => {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
};
function q(n, d = 1n) {
  if (d === 0n) throw new RangeError('division by zero');
  if (d < 0n) [n, d] = [-n, -d];
  const g = gcd(n, d);
  return g > 1n ? { n: n / g, d: d / g } : { n, d };
}
const ZERO = q(0n);
const ONE = q(1n);
const add = (a, b) => q(a.n * b.d + b.n * a.d, a.d * b.d);
const sub = (a, b) => q(a.n * b.d - b.n * a.d, a.d * b.d);
const mul = (a, b) => q(a.n * b.n, a.d * b.d);
const div = (a, b) => q(a.n * b.d, a.d * b.n);
const abs = (a) => (a.n < 0n ? { n: -a.n, d: a.d } : a);
const cmp = (a, b) => {
  const x = a.n * b.d;
  const y = b.n * a.d;
  return x < y ? -1 : x > y ? 1 : 0;
};
const eq = (a, b) => cmp(a, b) === 0;
const sum = (xs) => xs.reduce(add, ZERO);
const pow10 = (k) => 10n ** BigInt(k);

/** A plain decimal ("123.4500", "-0.1", "7") exactly; null for anything else. */
function decimal(text) {
  const m = typeof text === 'string' ? /^([+-]?)([0-9]+)(?:\.([0-9]+))?$/.exec(text) : null;
  if (!m) return null;
  const frac = m[3] ?? '';
  return q(BigInt(m[2] + frac) * (m[1] === '-' ? -1n : 1n), pow10(frac.length));
}

/** A JSON number as the decimal JavaScript writes it ("1e-7", "0.05", "152000000"), exactly. */
function numberValue(x) {
  if (typeof x !== 'number' || !Number.isFinite(x)) return null;
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/.exec(String(x));
  const frac = m[3] ?? '';
  const exp = Number(m[4] ?? 0) - frac.length;
  const n = BigInt(m[2] + frac) * (m[1] ? -1n : 1n);
  return exp >= 0 ? q(n * pow10(exp)) : q(n, pow10(-exp));
}

/** A parameter's value (a JSON number or numeric string) as an exact rational. */
const exactParam = (v) => (typeof v === 'number' ? numberValue(v) : decimal(String(v)));

/** n / d to an integer, ties to the even neighbour. */
function roundHalfEven(n, d) {
  const neg = n < 0n;
  const a = neg ? -n : n;
  let r = a / d;
  const twice = 2n * (a % d);
  if (twice > d || (twice === d && r % 2n === 1n)) r += 1n;
  return neg ? -r : r;
}

/** An integer times 10^-places as a plain decimal without trailing zeros. */
function plain(scaled, places) {
  const neg = scaled < 0n;
  let digits = (neg ? -scaled : scaled).toString();
  if (places > 0) {
    digits = digits.padStart(places + 1, '0');
    const whole = digits.slice(0, -places);
    const frac = digits.slice(-places).replace(/0+$/, '');
    digits = frac ? `${whole}.${frac}` : whole;
  } else if (places < 0 && digits !== '0') {
    digits += '0'.repeat(-places);
  }
  return neg && digits !== '0' ? `-${digits}` : digits;
}

/** Rounded half-even to `places` decimals, plain decimal string. */
function fixed(r, places) {
  return plain(places >= 0 ? roundHalfEven(r.n * pow10(places), r.d) : roundHalfEven(r.n, r.d * pow10(-places)), places);
}

/** Rounded half-even to `digits` significant digits, plain decimal string without trailing zeros. */
function significant(r, digits) {
  if (r.n === 0n) return '0';
  const a = abs(r);
  // e such that 10^e <= |r| < 10^(e+1), exactly
  let e = a.n.toString().length - a.d.toString().length;
  const atLeast = (k) => (k >= 0 ? a.n >= a.d * pow10(k) : a.n * pow10(-k) >= a.d);
  while (!atLeast(e)) e -= 1;
  while (atLeast(e + 1)) e += 1;
  return fixed(r, digits - 1 - e);
}

/** A terminating rational written exactly (sums of decimals always terminate). */
function exactText(r) {
  let places = 0;
  while ((r.n * pow10(places)) % r.d !== 0n) {
    places++;
    if (places > 400) return `${r.n}/${r.d}`;
  }
  return plain((r.n * pow10(places)) / r.d, places);
}

function median(values) {
  const s = [...values].sort(cmp);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : div(add(s[mid - 1], s[mid]), q(2n));
}

// ---- Canonical JSON: keys sorted at every level (by UTF-16 code unit), no whitespace ----

function canonical(value) {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonical(v))).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// ---- Times: ISO 8601 to integer microseconds since the epoch (bundles write microseconds) ----

function micros(text) {
  const m = typeof text === 'string' ? /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?(Z|[+-][0-9]{2}:[0-9]{2})$/.exec(text) : null;
  if (!m) return null;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
  // a real date and time of day (Date.UTC would roll 2026-02-30 over into March)
  if (!Number.isFinite(ms) || new Date(ms).toISOString().slice(0, 19) !== text.slice(0, 19)) return null;
  let offset = 0;
  if (m[8] !== 'Z') offset = (m[8][0] === '-' ? -1 : 1) * (Number(m[8].slice(1, 3)) * 60 + Number(m[8].slice(4, 6)));
  return BigInt(ms - offset * 60_000) * 1000n + BigInt((m[7] ?? '').padEnd(6, '0'));
}

/** Microseconds as the contract writes a time: 2026-11-24T10:05:00+00:00 (fraction only when there is one). */
function iso(us) {
  const seconds = us / 1_000_000n - (us % 1_000_000n < 0n ? 1n : 0n);
  const fraction = us - seconds * 1_000_000n;
  const text = new Date(Number(seconds) * 1000).toISOString().slice(0, 19);
  return `${text}${fraction ? `.${String(fraction).padStart(6, '0')}` : ''}+00:00`;
}
const HOUR_US = 3_600_000_000n;
const MINUTE_US = 60_000_000n;

/** A zone's offset from UTC at an instant (microseconds), as +HH:MM, from the IANA time-zone data; null for a zone unknown here. */
function zoneOffset(zone, us) {
  let format;
  try {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  } catch {
    return null;
  }
  const seconds = Number(us / 1_000_000n);
  const part = Object.fromEntries(format.formatToParts(new Date(seconds * 1000)).map((x) => [x.type, x.value]));
  // the zone's wall clock read as if it were UTC, minus the instant: the offset
  const wall = Date.UTC(+part.year, +part.month - 1, +part.day, +part.hour, +part.minute, +part.second) / 1000;
  const minutes = Math.round((wall - seconds) / 60);
  const m = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

// ---- The transparency log's hashes (RFC 9162 section 2.1): SHA-256, leaves 0x00 || entry, nodes 0x01 || left || right ----

const sha256 = (...parts) => crypto.createHash('sha256').update(Buffer.concat(parts)).digest();
const leafHashOf = (entryText) => sha256(Buffer.of(0), Buffer.from(entryText, 'utf8'));
const nodeHash = (left, right) => sha256(Buffer.of(1), left, right);
const HEX64 = /^[0-9a-f]{64}$/;
const odd = (x) => x % 2 === 1;
const half = (x) => Math.floor(x / 2);
const powerOfTwo = (x) => {
  while (x > 1 && x % 2 === 0) x /= 2;
  return x === 1;
};

/** RFC 9162 section 2.1.3.2: does `path` (hashes) prove the leaf `hash` at `index` in the tree of `size` leaves whose root is `root`? */
function verifyInclusion(index, size, hash, path, root) {
  if (index >= size) return false;
  let fn = index;
  let sn = size - 1;
  let r = hash;
  for (const p of path) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r);
      if (!odd(fn)) {
        while (!(odd(fn) || fn === 0)) [fn, sn] = [half(fn), half(sn)];
      }
    } else {
      r = nodeHash(r, p);
    }
    [fn, sn] = [half(fn), half(sn)];
  }
  return sn === 0 && r.equals(root);
}

/** RFC 9162 section 2.1.4.2: does `path` prove the tree of `first` leaves (root `firstRoot`) a prefix of the tree of `second` (root `secondRoot`)? 0 < first < second. */
function verifyConsistency(first, second, firstRoot, secondRoot, path) {
  if (path.length === 0) return false;
  // first a power of two: its root is a node of the proof the RFC leaves out
  const p = powerOfTwo(first) ? [firstRoot, ...path] : [...path];
  let fn = first - 1;
  let sn = second - 1;
  while (odd(fn)) [fn, sn] = [half(fn), half(sn)];
  let fr = p[0];
  let sr = p[0];
  for (const c of p.slice(1)) {
    if (sn === 0) return false;
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      if (!odd(fn)) {
        while (!(odd(fn) || fn === 0)) [fn, sn] = [half(fn), half(sn)];
      }
    } else {
      sr = nodeHash(sr, c);
    }
    [fn, sn] = [half(fn), half(sn)];
  }
  return fr.equals(firstRoot) && sr.equals(secondRoot) && sn === 0;
}

// ---- The methodology's rules (sections 4 to 9), exactly ----

/**
 * Section 5's outlier rule for one bucket: indexes of the venues left out. Runs with at least
 * outlier_min_venues venues; one venue at a time, the furthest from the median of the others
 * (among the venues still in) first, while the venues left out stay fewer than those kept;
 * then the venues kept must all be within the limit of the median of the other kept ones, else
 * nobody is left out.
 */
function outliers(prices, limit, minVenues) {
  const deviation = (i, among) => {
    const m = median(among.filter((j) => j !== i).map((j) => prices[j]));
    return div(abs(sub(prices[i], m)), m);
  };
  const kept = prices.map((_, i) => i);
  const out = [];
  while (kept.length >= minVenues && 2 * (out.length + 1) < prices.length) {
    let furthest = -1;
    let by = ZERO;
    for (const i of kept) {
      const d = deviation(i, kept);
      if (cmp(d, limit) > 0 && cmp(d, by) > 0) [furthest, by] = [i, d];
    }
    if (furthest < 0) break;
    out.push(furthest);
    kept.splice(kept.indexOf(furthest), 1);
  }
  if (out.length === 0) return [];
  const agree = kept.length < 2 || kept.every((i) => cmp(deviation(i, kept), limit) <= 0);
  return agree ? out : [];
}

const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const trades = (n) => `${n} trade${n === 1 ? '' : 's'}`;

/** Everything the certificate states, recomputed from the bundle alone. */
function recompute(bundle, p) {
  const window = obj(bundle.window);
  const start = micros(window.start);
  const end = micros(window.end);
  const problems = [];
  if (start === null || end === null) problems.push('the bundle has no window');
  if (!Array.isArray(bundle.trades)) problems.push('the bundle has no list of trades');
  if (!Array.isArray(bundle.venues)) problems.push('the bundle has no list of venues');
  const venues = new Map();
  const seen = new Set();
  for (const [i, raw] of arr(bundle.trades).entries()) {
    const t = obj(raw);
    const price = decimal(t.price);
    const amount = decimal(t.amount);
    const time = micros(t.time);
    const where = `trade ${i} (${show(t.exchange)} ${show(t.trade_id)})`;
    if (typeof t.exchange !== 'string') {
      problems.push(`${where}: no venue`);
      continue;
    }
    if (!price || !amount || price.n <= 0n || amount.n <= 0n) {
      problems.push(`${where}: price and amount must be positive decimal strings`);
      continue;
    }
    if (time === null || start === null || end === null || time < start || time >= end) {
      problems.push(`${where}: time ${show(t.time)} is outside the window`);
      continue;
    }
    const key = `${t.exchange}\u0000${show(t.trade_id)}\u0000${time}`;
    if (seen.has(key)) {
      problems.push(`${where}: listed twice`);
      continue;
    }
    seen.add(key);
    const v = venues.get(t.exchange) ?? { exchange: t.exchange, pv: ZERO, volume: ZERO, trades: 0 };
    venues.set(t.exchange, { exchange: t.exchange, pv: add(v.pv, mul(price, amount)), volume: add(v.volume, amount), trades: v.trades + 1 });
  }
  const traded = [...venues.values()].sort((a, b) => byName(a.exchange, b.exchange));
  const vwaps = traded.map((v) => div(v.pv, v.volume));
  const out = new Set(outliers(vwaps, p.outlier_limit, p.outlier_min_venues));
  const used = traded.filter((_, i) => !out.has(i));
  const usedVwaps = vwaps.filter((_, i) => !out.has(i));
  const excluded = traded.filter((_, i) => out.has(i)).map((v) => ({ exchange: v.exchange, reason: 'outlier' }));
  for (const raw of arr(bundle.venues)) {
    const v = obj(raw);
    if (typeof v.exchange === 'string' && venues.has(v.exchange)) continue;
    // listed, no trade: quiet (no_trades) if it had collected past the window's end, else behind (stale)
    const through = micros(v.collected_through);
    excluded.push({ exchange: text(v.exchange), reason: through !== null && end !== null && through >= end ? 'no_trades' : 'stale' });
  }
  excluded.sort((a, b) => byName(a.exchange, b.exchange));
  const rate = used.length ? div(sum(used.map((v) => v.pv)), sum(used.map((v) => v.volume))) : null;

  // the synthetic cross-rate: VWAP(BASE/USDT) x USD/QUOTE; USDT and USDC are 1 USD
  const inputs = obj(bundle.synthetic);
  const fx = isObj(inputs.fx) ? inputs.fx : null;
  const leg = isObj(inputs.usdt_leg) ? inputs.usdt_leg : null;
  const usdBase = bundle.base === 'USDT' || bundle.base === 'USDC';
  const syntheticProblems = [];
  if (!isObj(bundle.synthetic)) syntheticProblems.push('the bundle has no synthetic inputs');
  if ((inputs.fx ?? null) !== null && !fx) syntheticProblems.push('the FX rate is not an object');
  if ((inputs.usdt_leg ?? null) !== null && !leg) syntheticProblems.push('the USDT leg is not an object');
  let synthetic = null;
  const fxRate = fx ? decimal(fx.units_per_usd) : null;
  if (fx && !(fxRate && fxRate.n > 0n)) syntheticProblems.push(`FX units_per_usd ${show(fx.units_per_usd)} is not a positive decimal`);
  if (leg && (usdBase || leg.pair !== `${text(bundle.base)}USDT`)) syntheticProblems.push(`USDT leg ${show(leg.pair)} for a ${show(bundle.base)} pair`);
  if (!leg && !usdBase && fx) syntheticProblems.push(`no USDT leg for a ${show(bundle.base)} pair`);
  const legSums = arr(leg?.venues).map((raw) => ({ pv: decimal(obj(raw).pv), volume: decimal(obj(raw).volume) }));
  if (legSums.some((v) => !v.pv || !v.volume || v.volume.n < 0n)) syntheticProblems.push('a USDT-leg venue has no decimal pv and volume');
  if (fxRate && fxRate.n > 0n && syntheticProblems.length === 0) {
    if (usdBase) synthetic = fxRate;
    else {
      const volume = sum(legSums.map((v) => v.volume));
      if (volume.n > 0n) synthetic = mul(div(sum(legSums.map((v) => v.pv)), volume), fxRate);
    }
  }

  const divergence = rate && synthetic && synthetic.n > 0n ? div(sub(rate, synthetic), synthetic) : null;
  const hundred = q(100n);
  const t = bundle.quote === 'NGN' ? { verified: p.verified_pct_ngn, caution: p.caution_pct_ngn } : { verified: p.verified_pct, caution: p.caution_pct };
  let status = 'unverified';
  if (divergence) {
    const pct = mul(abs(divergence), hundred);
    status = cmp(pct, t.verified) <= 0 ? 'verified' : cmp(pct, t.caution) <= 0 ? 'caution' : 'unverified';
  }

  // confidence = S x D x V (a certified window's age is 0, so A = 1)
  let confidence = null;
  if (rate) {
    const s = sub(ONE, q(1n, 2n ** BigInt(used.length + 1)));
    let dispersion = ZERO;
    if (usedVwaps.length >= 2) {
      const sorted = [...usedVwaps].sort(cmp);
      const mean = div(sum(usedVwaps), q(BigInt(usedVwaps.length)));
      dispersion = div(sub(sorted.at(-1), sorted[0]), mean);
    }
    const excess = sub(dispersion, p.agreement);
    const d = cmp(excess, ZERO) > 0 ? div(ONE, add(ONE, div(excess, p.dispersion_scale))) : ONE;
    let v = q(1n, 2n);
    if (divergence) {
      const ratio = div(mul(abs(divergence), hundred), t.caution);
      v = div(ONE, add(ONE, mul(ratio, ratio)));
    }
    confidence = fixed(mul(mul(s, d), v), p.confidence_decimals);
  }

  return {
    problems,
    tradeCount: seen.size,
    used: used.map((v) => ({ exchange: v.exchange, trades: v.trades, volume: v.volume })),
    excluded,
    rate: rate ? significant(rate, p.rate_significant_digits) : null,
    synthetic: synthetic ? significant(synthetic, p.rate_significant_digits) : null,
    syntheticProblems,
    divergencePct: divergence ? fixed(mul(divergence, hundred), p.divergence_pct_decimals) : null,
    status,
    confidence,
    dataQuality: used.length >= 2 ? 'high' : used.length === 1 ? 'medium' : 'low',
  };
}

// ---- The checks ----

class Report {
  constructor() {
    this.lines = [];
    this.failed = [];
    this.skipped = [];
  }
  ok(name, detail) {
    this.lines.push(`ok ${name}: ${detail}`);
  }
  fail(name, detail) {
    this.lines.push(`FAIL ${name}: ${detail}`);
    this.failed.push(name);
  }
  skip(name, detail) {
    this.lines.push(`skip ${name}: ${detail}`);
    this.skipped.push(name);
  }
  /**
   * The last line: FAIL naming what failed; else ok, saying which checks were not made (the log's
   * without a head and proof, the HMAC without the secret), so a verification that skipped some
   * never reads as one that made them all.
   */
  result() {
    const failed = [...new Set(this.failed)];
    if (failed.length) return `result: FAIL (${failed.join(', ')})`;
    const skipped = [...new Set(this.skipped)];
    return skipped.length ? `result: ok, every check made holds; not checked: ${skipped.join(', ')}` : 'result: ok, every check holds';
  }
  /** Runs one check; an exception (a field missing, say) fails it with its message. */
  check(name, fn) {
    try {
      fn();
    } catch (e) {
      this.fail(name, `could not be checked: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  expect(name, failures, okDetail) {
    if (failures.length) this.fail(name, failures.join('; '));
    else this.ok(name, okDetail);
  }
}

/** Reading a document that may be malformed: anything that is not an object reads as an empty one, anything not a list as an empty list. */
const isObj = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);
const obj = (x) => (isObj(x) ? x : {});
const arr = (x) => (Array.isArray(x) ? x : []);
/** A value as JSON, for a report line (missing: null). */
const show = (v) => (v === undefined ? 'null' : canonical(v));
/** A string as it is, anything else as JSON (missing: null). */
const text = (v) => (typeof v === 'string' ? v : show(v));
/** A JSON number stated by the certificate equals a recomputed decimal string (or both are null). */
const sameNumber = (stated, recomputed) => (recomputed === null ? (stated ?? null) === null : typeof stated === 'number' && eq(numberValue(stated), decimal(recomputed)));
const sameSet = (a, b) => canonical([...a].sort(byName)) === canonical([...b].sort(byName));

/** null when `signature` (base64) is the Ed25519 signature of `message` by the published key `keyId`, else why not. */
function verifyEd25519(keys, keyId, message, signature) {
  const entry = keys.find((k) => k !== null && typeof k === 'object' && k.key_id === keyId);
  if (!entry) return `key ${show(keyId)} is not among the published keys (${keys.map((k) => show(k?.key_id)).join(', ') || 'none'})`;
  let key;
  try {
    key = crypto.createPublicKey(entry.public_key_pem);
  } catch {
    return `key ${show(keyId)} is not a readable public key`;
  }
  if (key.asymmetricKeyType !== 'ed25519') return `key ${show(keyId)} is not an Ed25519 key`;
  if (typeof message !== 'string') return 'nothing signed';
  if (typeof signature !== 'string' || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return 'the signature is not base64';
  let valid = false;
  try {
    valid = crypto.verify(null, Buffer.from(message, 'utf8'), key, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  return valid ? null : `does not verify with key ${show(keyId)}`;
}

/**
 * Every check of one certificate or fixing against its bundle, and of its place in the
 * transparency log. `bundleBytes` are the bundle as served (uncompressed), `keys` the published
 * keys (or null), `hmacSecret` optional, `log` what the log served (see logChecks).
 */
function verify({ certificate, bundleBytes, keys, hmacSecret, log }) {
  const r = new Report();
  const cert = obj(certificate);
  const data = obj(cert.data);
  const audit = obj(cert.audit);
  const { isFixing, kind, id } = recordKind(cert);
  const fixing = obj(cert.fixing);
  const bundleText = bundleBytes.toString('utf8');
  let parsed;
  try {
    parsed = JSON.parse(bundleText);
  } catch {
    r.fail('bundle', 'is not JSON');
  }
  let payload = null;

  r.check('bundle hash', () => {
    const stated = obj(cert.bundle);
    const sha = crypto.createHash('sha256').update(bundleBytes).digest('hex');
    const f = [];
    if (sha !== stated.sha256) f.push(`sha256 of the bundle is ${sha}, the certificate states ${show(stated.sha256)}`);
    if (bundleBytes.length !== stated.bytes) f.push(`the bundle has ${bundleBytes.length} bytes, the certificate states ${show(stated.bytes)}`);
    r.expect('bundle hash', f, `sha256 ${sha} (${bundleBytes.length} bytes) as the certificate states`);
  });
  if (parsed === undefined) return r;
  const bundle = obj(parsed);
  const window = obj(bundle.window);
  const methodology = obj(bundle.methodology);
  const params = obj(methodology.parameters);
  const fixingMinutes = Number.isInteger(params.fixing_window_minutes) && params.fixing_window_minutes > 0 ? params.fixing_window_minutes : PUBLISHED.fixing_window_minutes;

  r.check('bundle canonical', () => {
    r.expect('bundle canonical', canonical(bundle) === bundleText ? [] : ['the bundle is not canonical JSON (keys sorted, no whitespace)'], 'canonical JSON');
  });

  r.check('bundle identity', () => {
    const f = [];
    const start = micros(window.start);
    const end = micros(window.end);
    const time = micros(data.timestamp);
    if (bundle.id !== id) f.push(`bundle of ${show(bundle.id)}, not of ${show(id)}`);
    if (bundle.kind !== kind) f.push(`bundle kind ${show(bundle.kind)}`);
    if (isFixing && 'certificate_id' in cert) f.push('the record has both a certificate_id and a fixing_id');
    for (const k of ['pair', 'base', 'quote']) if (bundle[k] !== data[k]) f.push(`${k} ${show(bundle[k])} in the bundle, ${show(data[k])} in the certificate`);
    if (isFixing) {
      // a fixing's time is its window's end: the fixing_window_minutes before it
      if (end === null || end !== time) f.push(`window ends ${show(window.end)}, the fixing's time is ${show(data.timestamp)}`);
      if (start === null || start !== micros(fixing.window_start) || end !== micros(fixing.window_end)) f.push(`window ${show(bundle.window)}, the fixing's is ${show({ start: fixing.window_start ?? null, end: fixing.window_end ?? null })}`);
      if (start === null || end === null || end - start !== BigInt(fixingMinutes) * MINUTE_US) f.push(`window ${show(bundle.window)} is not the ${fixingMinutes} minutes before the fixing`);
    } else {
      const seconds = Number.isInteger(params.bucket_seconds) && params.bucket_seconds > 0 ? params.bucket_seconds : PUBLISHED.bucket_seconds;
      const bucket = BigInt(seconds) * 1_000_000n;
      if (start === null || start !== time) f.push(`window starts ${show(window.start)}, the certificate's time is ${show(data.timestamp)}`);
      if (start === null || end === null || end - start !== bucket || start % bucket !== 0n) f.push(`window ${show(bundle.window)} is not one bucket of ${seconds} seconds`);
    }
    if (methodology.version !== cert.methodology_version) f.push(`methodology ${show(methodology.version)} in the bundle, ${show(cert.methodology_version)} in the certificate`);
    const expectedId = time === null ? null : `${isFixing ? 'FIX' : 'CERT'}-${text(data.pair)}-${iso(time).slice(0, 19).replace(/[-:]/g, '')}Z`;
    if (expectedId === null || id !== expectedId) f.push(`${kind} id ${show(id)} does not name ${show(data.pair)} at ${show(data.timestamp)}`);
    r.expect('bundle identity', f, `${text(bundle.id)}, ${text(bundle.pair)} from ${text(window.start)} to ${text(window.end)}`);
  });

  // a fixing is taken at fixing_local_time in its quote currency's zone, or fixing_utc_time UTC, on its date there
  if (isFixing) {
    r.check('fixing', () => {
      const f = [];
      const time = micros(data.timestamp);
      const known = fixing.kind === 'local' || fixing.kind === 'utc';
      if (!known) f.push(`kind ${show(fixing.kind)} is neither local nor utc`);
      const home = typeof data.quote === 'string' && Object.hasOwn(QUOTE_ZONES, data.quote) ? QUOTE_ZONES[data.quote] : null;
      const zone = fixing.kind === 'utc' ? 'UTC' : home;
      if (known && fixing.zone !== zone) f.push(`zone ${show(fixing.zone)}, the ${fixing.kind} fixing of a ${show(data.quote)} pair is taken in ${show(zone)}`);
      const clockName = fixing.kind === 'utc' ? 'fixing_utc_time' : 'fixing_local_time';
      const clock = typeof params[clockName] === 'string' && /^[0-9]{2}:[0-9]{2}$/.test(params[clockName]) ? params[clockName] : PUBLISHED[clockName];
      if (fixing.time !== data.timestamp || fixing.window_end !== data.timestamp) f.push(`fixing time ${show(fixing.time)} and window end ${show(fixing.window_end)}, the record's time is ${show(data.timestamp)}`);
      if (time === null || micros(fixing.window_start) !== time - BigInt(fixingMinutes) * MINUTE_US) f.push(`window start ${show(fixing.window_start)} is not ${fixingMinutes} minutes before ${show(data.timestamp)}`);
      const local = typeof fixing.local_time === 'string' ? fixing.local_time : '';
      if (time === null || micros(local) !== time) f.push(`local time ${show(fixing.local_time)} is not the instant ${show(data.timestamp)}`);
      else if (local.slice(0, 19) !== `${text(fixing.date)}T${clock}:00`) f.push(`local time ${show(fixing.local_time)} is not ${clock} on ${show(fixing.date)}`);
      else if (zone !== null) {
        const offset = zoneOffset(zone, time);
        if (offset === null) f.push(`no time-zone data for ${zone} here`);
        else if (local.slice(19) !== offset) f.push(`local time ${show(fixing.local_time)}, but ${zone} is at ${offset} then`);
      }
      r.expect('fixing', f, `${text(fixing.kind)} fixing of ${text(fixing.date)}: ${clock} in ${text(zone)} (${local}) is ${text(data.timestamp)}, its window the ${fixingMinutes} minutes before`);
    });
  }

  r.check('certificate signature', () => {
    if (!keys) return r.fail('certificate signature', 'no keys to check it with (give --keys, or use --url)');
    const { customer: _customer, ...issued } = cert;
    const { certificate_signature: signature, ...rest } = audit;
    const problem = verifyEd25519(keys, audit.ed25519_key_id, canonical({ ...issued, audit: rest }), signature);
    r.expect('certificate signature', problem ? [problem] : [], `Ed25519 over the certificate (bundle hash included) verifies with key ${text(audit.ed25519_key_id)}`);
  });

  r.check('payload signature', () => {
    if (!keys) return r.fail('payload signature', 'no keys to check it with (give --keys, or use --url)');
    const problem = verifyEd25519(keys, audit.ed25519_key_id, audit.signed_payload, audit.ed25519_signature);
    r.expect('payload signature', problem ? [problem] : [], `Ed25519 over signed_payload verifies with key ${text(audit.ed25519_key_id)}`);
  });

  r.check('hmac', () => {
    if (hmacSecret === undefined) return r.skip('hmac', 'no --hmac-secret given (only the server holds it)');
    if (typeof audit.signed_payload !== 'string') return r.fail('hmac', 'no signed_payload');
    const mac = crypto.createHmac('sha256', hmacSecret).update(audit.signed_payload).digest('hex');
    r.expect('hmac', mac === audit.signature ? [] : ['HMAC-SHA256 of signed_payload differs from audit.signature'], 'HMAC-SHA256 of signed_payload matches audit.signature');
  });

  r.check('signed payload', () => {
    if (typeof audit.signed_payload !== 'string') return r.fail('signed payload', 'no signed_payload');
    let p;
    try {
      p = JSON.parse(audit.signed_payload);
    } catch {
      return r.fail('signed payload', 'signed_payload is not JSON');
    }
    if (!isObj(p)) return r.fail('signed payload', 'signed_payload is not a JSON object');
    payload = p;
    const f = [];
    if (canonical(p) !== audit.signed_payload) f.push('signed_payload is not canonical JSON');
    if (p.pair !== data.pair) f.push(`pair ${show(p.pair)}, the certificate's is ${show(data.pair)}`);
    if (p.time !== data.timestamp) f.push(`time ${show(p.time)}, the certificate's is ${show(data.timestamp)}`);
    if (show(p.sources) !== show(data.sources)) f.push(`sources ${show(p.sources)}, the certificate's are ${show(data.sources)}`);
    if (!Array.isArray(data.sources) || data.vwap_sources_count !== data.sources.length) f.push(`vwap_sources_count ${show(data.vwap_sources_count)} for the sources ${show(data.sources)}`);
    const market = p.market ?? 'real';
    if (market !== (bundle.market === 'simulated' ? 'simulated' : 'real')) f.push(`market ${show(market)} signed, the bundle says ${show(bundle.market)}`);
    if (isFixing) {
      if (p.fixing !== fixing.kind) f.push(`fixing ${show(p.fixing)} signed, the record's kind is ${show(fixing.kind)}`);
    } else if ('fixing' in p) {
      f.push(`a fixing's payload (fixing ${show(p.fixing)}) on a certificate`);
    }
    // a fixing without trades signs a null rate; everything else a decimal string
    if (!(typeof p.rate === 'string' && decimal(p.rate)) && !(isFixing && p.rate === null)) f.push(`rate ${show(p.rate)} is not a decimal string`);
    const what = isFixing ? 'pair, time, sources and fixing kind' : 'pair, time and sources';
    r.expect('signed payload', f, `${what} as the certificate states${market === 'simulated' ? ' (simulated market, so signed)' : ''}`);
  });

  // parameters: the bundle's, checked against the published ones (a value unusable for
  // computing is replaced by the published one, and the check fails)
  r.check('parameters', () => {
    const f = [];
    if (methodology.version !== METHODOLOGY) f.push(`methodology ${show(methodology.version)}: this verifier knows ${METHODOLOGY} only`);
    for (const [name, value] of Object.entries(PUBLISHED)) {
      if (!(name in params)) f.push(`${name} missing`);
      else if (params[name] !== value) f.push(`${name} is ${show(params[name])}, published ${show(value)}`);
    }
    for (const name of Object.keys(params)) if (!(name in PUBLISHED) && !OPERATOR_SETTINGS.has(name)) f.push(`${name} is not a ${METHODOLOGY} parameter`);
    const lag = 'settle_after_seconds' in params ? ` (settle_after_seconds ${show(params.settle_after_seconds)}, an operator setting)` : '';
    r.expect('parameters', f, `the published ${METHODOLOGY} values${lag}`);
  });
  const p = {};
  for (const [name, published] of Object.entries(PUBLISHED)) {
    const value = name in params ? params[name] : published;
    if (EXACT.includes(name)) p[name] = (typeof value === 'number' || typeof value === 'string' ? exactParam(value) : null) ?? exactParam(published);
    else if (typeof published === 'number') p[name] = Number.isInteger(value) && value >= 0 && value <= 100_000 ? value : published;
    else p[name] = value;
  }

  let c = null;
  r.check('trades', () => {
    c = recompute(bundle, p);
    r.expect('trades', c.problems, c.tradeCount === 0 ? 'no trade in the window' : `${trades(c.tradeCount)}, all inside the window, each once`);
  });
  if (!c) return r;

  r.check('rate', () => {
    const f = [];
    if (c.rate === null && !isFixing) f.push('no trade in the window: no rate, yet a certificate was issued');
    else if (c.rate === null) {
      // minimum-data rule: a fixing without trades publishes no rate, and says so
      if (payload?.rate !== null) f.push(`no trade in the window, yet the signed rate is ${show(payload?.rate)}`);
      if (data.rate !== null) f.push(`no trade in the window, yet data.rate is ${show(data.rate)}`);
      if (typeof cert.notes !== 'string') f.push('no trade in the window, and no notes say so');
    } else {
      if (payload?.rate !== c.rate) f.push(`recomputed ${c.rate}, signed ${show(payload?.rate)}`);
      if (!sameNumber(data.rate, c.rate)) f.push(`recomputed ${c.rate}, data.rate ${show(data.rate)}`);
    }
    const okDetail = c.rate === null ? 'none: no trade in the window, so no rate (minimum-data rule), as signed' : `${c.rate} recomputed from ${trades(c.tradeCount)} equals the signed string digit for digit`;
    r.expect('rate', f, okDetail);
  });

  const inputs = obj(cert.inputs);
  r.check('venues', () => {
    const f = [];
    const stated = arr(inputs.venues).map(obj);
    const byEx = new Map(stated.map((v) => [text(v.exchange), v]));
    if (stated.length !== c.used.length || c.used.some((v) => !byEx.has(v.exchange))) f.push(`venues used ${show(c.used.map((v) => v.exchange))}, the certificate lists ${show(stated.map((v) => v.exchange))}`);
    for (const v of c.used) {
      const s = byEx.get(v.exchange);
      if (!s) continue;
      if (s.trades !== v.trades) f.push(`${v.exchange}: ${trades(v.trades)}, the certificate says ${show(s.trades)}`);
      const vol = decimal(s.volume);
      if (!vol || !eq(vol, v.volume)) f.push(`${v.exchange}: volume ${exactText(v.volume)}, the certificate says ${show(s.volume)}`);
    }
    if (!sameSet(arr(data.sources).map(text), c.used.map((v) => v.exchange))) f.push(`data.sources ${show(data.sources)}, recomputed ${show(c.used.map((v) => v.exchange))}`);
    r.expect('venues', f, c.used.map((v) => `${v.exchange} ${trades(v.trades)}, volume ${exactText(v.volume)}`).join('; ') || 'none');
  });

  r.check('exclusions', () => {
    const stated = arr(inputs.excluded).map((e) => `${text(obj(e).exchange)}:${text(obj(e).reason)}`);
    const mine = c.excluded.map((e) => `${e.exchange}:${e.reason}`);
    r.expect('exclusions', sameSet(stated, mine) ? [] : [`recomputed ${show(mine)}, the certificate says ${show(stated)}`], mine.length ? mine.join(', ').replace(/:/g, ' ') : 'none');
  });

  r.check('fx', () => {
    const fx = obj(bundle.synthetic).fx;
    if (!isObj(fx)) return r.ok('fx', 'no FX rate in force: no synthetic price');
    const f = [];
    const hour = micros(fx.hour);
    const start = micros(window.start);
    if (start === null) return r.fail('fx', 'the bundle has no window');
    const windowHour = start - (start % HOUR_US);
    if (fx.currency !== bundle.quote) f.push(`FX of ${show(fx.currency)} for a ${show(bundle.quote)} pair`);
    if (hour !== windowHour) f.push(`FX of the hour ${show(fx.hour)}, the window's hour starts at ${iso(windowHour)}`);
    if (hour === null) return r.expect('fx', f, '');
    const freshHours = 'fx_fresh_hours' in params ? params.fx_fresh_hours : PUBLISHED.fx_fresh_hours;
    if (!Number.isInteger(freshHours)) return r.fail('fx', `fx_fresh_hours ${show(freshHours)} is not a whole number of hours`);
    const freshFrom = hour - BigInt(freshHours) * HOUR_US;
    const observations = arr(fx.observations).map(obj);
    for (const o of observations) {
      if (micros(o.time) === null || micros(o.source_updated_at) === null || !decimal(o.units_per_usd)) f.push(`observation ${show(o.source)} is not well formed`);
      else if (micros(o.time) > hour) f.push(`observation ${show(o.source)} at ${show(o.time)} is after the hour`);
    }
    const fresh = observations.filter((o) => decimal(o.units_per_usd) && micros(o.source_updated_at) !== null && micros(o.source_updated_at) >= freshFrom && micros(o.time) !== null && micros(o.time) <= hour);
    if (fx.fresh_sources !== fresh.length) f.push(`fresh_sources ${show(fx.fresh_sources)}, the observations hold ${fresh.length} fresh`);
    if (fresh.length > 0) {
      const m = median(fresh.map((o) => decimal(o.units_per_usd)));
      const stated = decimal(fx.units_per_usd);
      if (!stated || !eq(m, stated)) f.push(`units_per_usd ${show(fx.units_per_usd)}, the median of the fresh observations is ${exactText(m)}`);
      r.expect('fx', f, `${text(fx.currency)} ${text(fx.units_per_usd)} per USD, the median of ${fresh.length} fresh source(s) at ${text(fx.hour)}`);
    } else {
      r.expect('fx', f, `${text(fx.currency)} ${text(fx.units_per_usd)} per USD: no source fresh (fx_stale), the newest observation within fx_fallback_hours`);
    }
  });

  const v = obj(cert.verification);
  r.check('synthetic price', () => {
    const f = [...c.syntheticProblems];
    if (!sameNumber(v.synthetic_price, c.synthetic)) f.push(`recomputed ${text(c.synthetic)}, the certificate says ${show(v.synthetic_price)}`);
    r.expect('synthetic price', f, c.synthetic === null ? 'none (no USDT-leg trade or no FX rate)' : c.synthetic);
  });
  r.check('divergence', () => {
    r.expect('divergence', sameNumber(v.divergence_pct, c.divergencePct) ? [] : [`recomputed ${text(c.divergencePct)}%, the certificate says ${show(v.divergence_pct)}`], c.divergencePct === null ? 'none' : `${c.divergencePct}%`);
  });
  r.check('status', () => {
    r.expect('status', v.status === c.status ? [] : [`recomputed ${c.status}, the certificate says ${show(v.status)}`], c.status);
  });
  r.check('confidence', () => {
    r.expect('confidence', sameNumber(v.confidence, c.confidence) ? [] : [`recomputed ${text(c.confidence)}, the certificate says ${show(v.confidence)}`], text(c.confidence));
  });
  r.check('data quality', () => {
    r.expect('data quality', v.data_quality === c.dataQuality ? [] : [`recomputed ${c.dataQuality}, the certificate says ${show(v.data_quality)}`], c.dataQuality);
  });

  r.check('bundle result', () => {
    const res = obj(bundle.result);
    const f = [];
    if ((res.rate ?? null) !== c.rate) f.push(`rate ${show(res.rate)}`);
    if ((res.synthetic_price ?? null) !== c.synthetic) f.push(`synthetic_price ${show(res.synthetic_price)}`);
    if (!sameNumber(res.divergence_pct, c.divergencePct)) f.push(`divergence_pct ${show(res.divergence_pct)}`);
    if (res.status !== c.status) f.push(`status ${show(res.status)}`);
    if (!sameNumber(res.confidence, c.confidence)) f.push(`confidence ${show(res.confidence)}`);
    if (res.data_quality !== c.dataQuality) f.push(`data_quality ${show(res.data_quality)}`);
    const venue = (s) => `${text(obj(s).exchange)}:${text(obj(s).trades)}:${text(obj(s).volume)}`;
    if (!sameSet(arr(res.sources).map(venue), arr(inputs.venues).map(venue))) f.push("sources differ from the certificate's inputs.venues");
    const exclusion = (e) => `${text(obj(e).exchange)}:${text(obj(e).reason)}`;
    if (!sameSet(arr(res.excluded).map(exclusion), c.excluded.map(exclusion))) f.push(`excluded ${show(res.excluded)}`);
    r.expect('bundle result', f.length ? [`the bundle's stated result differs from the recomputation: ${f.join(', ')}`] : [], 'the bundle states the recomputed result');
  });

  const { customer: _customer, ...record } = cert;
  logChecks(r, log ?? { skip: 'not asked for' }, keys, {
    id: id ?? null,
    kind,
    pair: data.pair ?? null,
    time: data.timestamp ?? null,
    rate: payload?.rate ?? null,
    certificate_sha256: sha256(Buffer.from(canonical(record), 'utf8')).toString('hex'),
    bundle_sha256: sha256(bundleBytes).toString('hex'),
  });

  r.summary = {
    pair: data.pair,
    time: data.timestamp,
    rate: c.rate,
    used: c.used.map((u) => `${u.exchange} (${trades(u.trades)})`),
    excluded: c.excluded.map((e) => `${e.exchange} (${e.reason})`),
  };
  return r;
}

// ---- The transparency log (methodology section 16) ----

const HEAD_FIELDS = ['root_hash', 'timestamp', 'tree_size'];

/**
 * Checks a signed tree head as GET /v1/transparency/head serves it: well formed, signed_payload the
 * canonical JSON of its root, time and size, the Ed25519 signature of it by a published key.
 * Returns its size and root (bytes) when those are well formed, else null.
 */
function checkHead(r, name, head, keys) {
  const h = obj(head);
  const f = [];
  const sizeOk = Number.isSafeInteger(h.tree_size) && h.tree_size >= 0;
  const rootOk = typeof h.root_hash === 'string' && HEX64.test(h.root_hash);
  if (!isObj(head)) f.push('the head is not a JSON object');
  else {
    if (!sizeOk) f.push(`tree_size ${show(h.tree_size)} is not a whole number`);
    if (!rootOk) f.push(`root_hash ${show(h.root_hash)} is not a SHA-256 hash in hex`);
    if (micros(h.timestamp) === null) f.push(`timestamp ${show(h.timestamp)} is not a time`);
    if (h.algorithm !== 'Ed25519') f.push(`algorithm ${show(h.algorithm)}, not Ed25519`);
    let signed = null;
    try {
      signed = typeof h.signed_payload === 'string' ? JSON.parse(h.signed_payload) : null;
    } catch {
      signed = null;
    }
    if (!isObj(signed)) f.push('signed_payload is not a JSON object');
    else {
      if (canonical(signed) !== h.signed_payload) f.push('signed_payload is not canonical JSON');
      for (const k of HEAD_FIELDS) if (show(signed[k]) !== show(h[k])) f.push(`signed_payload's ${k} is ${show(signed[k])}, the head's ${show(h[k])}`);
      const extra = Object.keys(signed).filter((k) => !HEAD_FIELDS.includes(k));
      if (extra.length) f.push(`signed_payload signs more than the root, time and size (${extra.sort(byName).join(', ')})`);
    }
    if (!keys) f.push('no keys to check its signature with (give --keys, or use --url)');
    else {
      const problem = verifyEd25519(keys, h.key_id, h.signed_payload, h.signature);
      if (problem) f.push(`the signature ${problem}`);
    }
  }
  r.expect(name, f, `${text(h.tree_size)} entries, root ${text(h.root_hash)}, signed ${text(h.timestamp)}; the signature verifies with key ${text(h.key_id)}`);
  return sizeOk && rootOk ? { size: h.tree_size, root: Buffer.from(h.root_hash, 'hex') } : null;
}

/** The fields in which a logged entry (text) differs from the one built, or null when it is not a JSON object. */
function entryDifference(logged, built) {
  let e;
  try {
    e = typeof logged === 'string' ? JSON.parse(logged) : null;
  } catch {
    return null;
  }
  if (!isObj(e)) return null;
  return [...new Set([...Object.keys(e), ...Object.keys(built)])].filter((k) => show(e[k]) !== show(built[k])).sort(byName);
}

/**
 * The log checks of a certificate or fixing: `log` is { skip: why } or what the log served,
 * { head | headError, proof | proofError } (the inclusion proof at the head's size); `built` the
 * entry the service appends for it, made here from the record and its bundle.
 */
function logChecks(r, log, keys, built) {
  if (log.skip) {
    r.skip('log head', log.skip);
    r.skip('log inclusion', log.skip);
    return;
  }
  let tree = null;
  if (log.headError) r.fail('log head', log.headError);
  else tree = checkHead(r, 'log head', log.head, keys);
  r.check('log inclusion', () => {
    if (log.proofError) return r.fail('log inclusion', log.proofError);
    if (!tree) return r.fail('log inclusion', 'no signed head to prove it against');
    const p = obj(log.proof);
    const f = [];
    const entry = canonical(built);
    const leaf = leafHashOf(entry);
    if (p.id !== built.id) f.push(`a proof for ${show(p.id)}, not for ${show(built.id)}`);
    if (p.tree_size !== tree.size) f.push(`a proof in the tree of ${show(p.tree_size)} entries, the head's has ${tree.size}`);
    if (p.entry !== entry) {
      const differ = entryDifference(p.entry, built);
      const what = `the entry built from the ${built.kind} and its bundle`;
      f.push(differ === null ? `the logged entry ${show(p.entry)} is not a JSON object` : differ.length ? `the logged entry differs from ${what} in ${differ.join(', ')}` : `the logged entry is not the canonical JSON of ${what}`);
    }
    // the served leaf hash must be the served entry's; the path is checked from the entry built here
    const servedLeaf = typeof p.entry === 'string' ? leafHashOf(p.entry).toString('hex') : null;
    if (p.leaf_hash !== servedLeaf) f.push(`leaf_hash ${show(p.leaf_hash)} is not SHA-256(0x00 || entry) of the entry served`);
    const path = arr(p.audit_path);
    const index = p.leaf_index;
    if (!Array.isArray(p.audit_path) || path.some((h) => typeof h !== 'string' || !HEX64.test(h))) f.push('audit_path is not a list of SHA-256 hashes in hex');
    else if (!Number.isSafeInteger(index) || index < 0) f.push(`leaf_index ${show(index)} is not a whole number`);
    // (an entry that differs cannot lead there: that is said above)
    else if (p.entry === entry && !verifyInclusion(index, tree.size, leaf, path.map((h) => Buffer.from(h, 'hex')), tree.root)) f.push(`the audit path of ${path.length} hashes from leaf ${index} does not lead to the head's root`);
    r.expect('log inclusion', f, `${text(built.id)} is leaf ${text(index)} of the tree of ${tree.size} entries: its entry, built from the ${built.kind} and its bundle, and an audit path of ${path.length} hashes lead to the head's root`);
  });
}

/**
 * Monitor: the log only grew from the saved head to the current one. Both heads verify; equal
 * sizes have equal roots; a larger one is proved consistent (RFC 9162 section 2.1.4.2) with the
 * saved one by the served proof; a smaller one fails. `proof` is the consistency proof served
 * (or proofError), absent when the sizes need none.
 */
function monitor({ saved, current, keys, proof, proofError }) {
  const r = new Report();
  const old = checkHead(r, 'saved head', saved, keys);
  const now = checkHead(r, 'current head', current, keys);
  r.check('consistency', () => {
    if (!old || !now) return r.fail('consistency', 'a head without a size and root cannot be compared');
    const grew = `${old.size} -> ${now.size} entries`;
    if (now.size < old.size) return r.fail('consistency', `the current head has ${now.size} entries, fewer than the ${old.size} of the saved one: the log lost entries`);
    if (now.size === old.size) {
      const same = old.root.equals(now.root);
      return r.expect('consistency', same ? [] : [`the same size, ${now.size} entries, but another root: the log changed entries it had signed`], `the same size, ${now.size} entries, and the same root`);
    }
    if (old.size === 0) {
      // the empty tree's root is SHA-256 of nothing, and every tree extends it
      return r.expect('consistency', old.root.equals(sha256()) ? [] : ['the saved head has no entries but is not the root of the empty tree'], `${grew}: the empty tree is a prefix of every tree`);
    }
    if (proofError) return r.fail('consistency', proofError);
    const p = obj(proof);
    const f = [];
    const path = arr(p.proof);
    if (p.first !== old.size || p.second !== now.size) f.push(`a proof from ${show(p.first)} to ${show(p.second)} entries, not from ${old.size} to ${now.size}`);
    if (!Array.isArray(p.proof) || path.some((h) => typeof h !== 'string' || !HEX64.test(h))) f.push('proof is not a list of SHA-256 hashes in hex');
    else if (!verifyConsistency(old.size, now.size, old.root, now.root, path.map((h) => Buffer.from(h, 'hex')))) {
      f.push(`the proof of ${path.length} hashes does not lead from the saved root to the current root: the log no longer holds the ${old.size} entries it had signed, unchanged`);
    }
    r.expect('consistency', f, `${grew}: a proof of ${path.length} hashes leads from the saved root to the current root, so the first ${old.size} entries are unchanged`);
  });
  return r;
}

// ---- Command line ----

function usage(message) {
  if (message) process.stderr.write(`afrates-verify: ${message}\n`);
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

const VALUED = ['certificate', 'bundle', 'keys', 'hmac-secret', 'url', 'key', 'pair', 'time', 'fixing', 'date', 'head', 'proof'];
const FLAGS = ['monitor', 'no-log', 'save'];

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(a);
    if (!m || !(VALUED.includes(m[1]) || FLAGS.includes(m[1]))) usage(`unknown argument ${JSON.stringify(a)}`);
    if (m[1] in o) usage(`--${m[1]} given twice`);
    if (FLAGS.includes(m[1])) {
      if (m[2] !== undefined) usage(`--${m[1]} takes no value`);
      o[m[1]] = true;
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) usage(`--${m[1]} needs a value`);
    o[m[1]] = value;
  }
  const given = (...names) => names.filter((n) => o[n] !== undefined);
  if (o.monitor) {
    const other = given('certificate', 'bundle', 'hmac-secret', 'key', 'pair', 'time', 'fixing', 'date', 'proof', 'no-log');
    if (other.length) usage(`--monitor takes --url, --head, --keys and --save, not --${other[0]}`);
    if (o.url === undefined || o.head === undefined) usage('--monitor needs --url and --head');
    if (!/^https?:\/\/[^\s]+$/.test(o.url)) usage('--url must be an http(s) URL');
    return o;
  }
  if (o.save) usage('--save goes with --monitor');
  const files = given('certificate', 'bundle', 'keys').length > 0;
  const remote = given('url', 'key', 'pair', 'time', 'fixing', 'date').length > 0;
  if (files && remote) usage('give either --certificate/--bundle files or --url/--key/--pair/--time, not both');
  if (remote && given('head', 'proof').length) usage('--head and --proof go with files: --url fetches the newest head and the proof itself');
  if (files && (o.certificate === undefined || o.bundle === undefined)) usage('--certificate and --bundle go together');
  if ((o.head === undefined) !== (o.proof === undefined)) usage('--head and --proof go together');
  if (o['no-log'] && o.head !== undefined) usage('--no-log skips the log: not with --head and --proof');
  const fixing = o.fixing !== undefined || o.date !== undefined;
  if (remote && fixing && o.time !== undefined) usage('--time names a certificate, --fixing and --date a fixing: not both');
  if (remote && fixing && [o.url, o.key, o.pair, o.fixing, o.date].some((v) => v === undefined)) usage('--url, --key, --pair, --fixing and --date go together');
  if (remote && !fixing && [o.url, o.key, o.pair, o.time].some((v) => v === undefined)) usage('--url, --key, --pair and --time go together');
  if (!files && !remote) usage();
  if (remote) {
    if (!/^https?:\/\/[^\s]+$/.test(o.url)) usage('--url must be an http(s) URL');
    if (!/^[A-Z0-9]{5,12}$/.test(o.pair)) usage('--pair must be like BTCNGN');
    if (fixing) {
      if (o.fixing !== 'local' && o.fixing !== 'utc') usage('--fixing must be local or utc');
      if (!/^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(o.date) || micros(`${o.date}T00:00:00+00:00`) === null) usage('--date must be a day, e.g. 2026-11-24');
    } else {
      const t = micros(o.time.replace(/ 00:00$/, '+00:00'));
      if (t === null) usage('--time must be ISO 8601, e.g. 2026-11-24T10:05:00+00:00');
      o.time = `${iso(t).slice(0, 19)}+00:00`;
    }
  }
  return o;
}

/** Uncompressed bytes: a gzip stream (a saved response that kept its encoding) is inflated. */
const inflate = (bytes) => (bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b ? zlib.gunzipSync(bytes) : bytes);

function readFile(file, what) {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    usage(`cannot read the ${what} ${file}: ${e.code ?? e.message}`);
  }
}

function parseJson(bytes, what) {
  try {
    return JSON.parse(inflate(bytes).toString('utf8'));
  } catch {
    throw new Error(`the ${what} is not JSON`);
  }
}

async function get(url, key) {
  let res;
  try {
    res = await fetch(url, { headers: { Accept: 'application/json', 'Accept-Encoding': 'gzip', ...(key ? { 'X-API-Key': key } : {}) } });
  } catch (e) {
    throw new Error(`GET ${url}: ${e.cause?.message ?? e.message}`);
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) {
    let message = bytes.toString('utf8').slice(0, 300);
    try {
      message = JSON.parse(inflate(bytes).toString('utf8')).message ?? message;
    } catch {
      /* as sent */
    }
    throw new Error(`GET ${url}: HTTP ${res.status}: ${message}`);
  }
  return inflate(bytes);
}

/** A signed record's kind and id: a fixing names itself by fixing_id and carries its `fixing`. */
function recordKind(record) {
  const cert = obj(record);
  const isFixing = 'fixing_id' in cert || 'fixing' in cert;
  return { isFixing, kind: isFixing ? 'fixing' : 'certificate', id: isFixing ? cert.fixing_id : cert.certificate_id };
}

/** The published keys, from the API (counted against `key`'s limit when given) or a file saved earlier. */
async function loadKeys({ base, key, file }) {
  const listed = file === undefined ? parseJson(await get(`${base}/v1/certificates/keys`, key), 'key list') : parseJson(readFile(file, 'key list'), 'key list');
  const keys = obj(listed).keys;
  if (!Array.isArray(keys)) throw new Error(`the key list has no "keys" array${file === undefined ? '' : ' (save GET /v1/certificates/keys as it is)'}`);
  return keys;
}

/** The log's newest signed head and the record's inclusion proof at its size; a failure is reported by the log checks. */
async function fetchLog(base, record) {
  let head;
  try {
    head = parseJson(await get(`${base}/v1/transparency/head`), 'head');
  } catch (e) {
    return { headError: e.message, proofError: 'no signed head to prove it against' };
  }
  const size = obj(head).tree_size;
  const { id } = recordKind(record);
  if (!Number.isSafeInteger(size) || size < 1) return { head, proofError: `no proof to ask for: the head's tree_size is ${show(size)}` };
  if (typeof id !== 'string') return { head, proofError: 'the record has no id to ask the log for' };
  try {
    return { head, proof: parseJson(await get(`${base}/v1/transparency/proof/inclusion?id=${encodeURIComponent(id)}&tree_size=${size}`), 'inclusion proof') };
  } catch (e) {
    return { head, proofError: e.message };
  }
}

async function load(o) {
  if (o.url !== undefined) {
    const base = o.url.replace(/\/+$/, '');
    let certificate;
    let bundleBytes;
    if (o.fixing !== undefined) {
      const day = obj(parseJson(await get(`${base}/v1/fixings/${o.pair}/${o.date}`, o.key), 'fixing list'));
      const found = arr(day.fixings).map(obj).find((f) => f.kind === o.fixing);
      if (!found) throw new Error(`GET ${base}/v1/fixings/${o.pair}/${o.date} lists no ${o.fixing} fixing`);
      if (!isObj(found.certificate)) throw new Error(`the ${o.fixing} fixing of ${o.pair} on ${o.date} comes without its signed record ("certificate"): an Enterprise key sees it`);
      certificate = found.certificate;
      bundleBytes = await get(`${base}/v1/fixings/${o.pair}/${o.date}/${o.fixing}/bundle`, o.key);
    } else {
      const path = `${base}/v1/certificates/${o.pair}/${encodeURIComponent(o.time)}`;
      certificate = parseJson(await get(path, o.key), 'certificate');
      bundleBytes = await get(`${path}/bundle`, o.key);
    }
    const keys = await loadKeys({ base, key: o.key });
    const log = o['no-log'] ? { skip: '--no-log given' } : await fetchLog(base, certificate);
    return { certificate, bundleBytes, keys, log };
  }
  const certificate = parseJson(readFile(o.certificate, 'certificate'), 'certificate');
  const bundleBytes = inflate(readFile(o.bundle, 'bundle'));
  const keys = o.keys === undefined ? null : await loadKeys({ file: o.keys });
  let log;
  if (o['no-log']) log = { skip: '--no-log given' };
  else if (o.head === undefined) log = { skip: 'no --head and --proof given (--url fetches them)' };
  else log = { head: parseJson(readFile(o.head, 'head'), 'head'), proof: parseJson(readFile(o.proof, 'inclusion proof'), 'inclusion proof') };
  return { certificate, bundleBytes, keys, log };
}

function finish(lines, failed) {
  process.stdout.write(`${lines.join('\n')}\n`);
  process.exitCode = failed ? 1 : 0;
}

async function runMonitor(o) {
  const base = o.url.replace(/\/+$/, '');
  const savedBytes = readFile(o.head, 'saved head');
  let saved;
  let current;
  let currentBytes;
  let keys;
  try {
    saved = parseJson(savedBytes, 'saved head');
    currentBytes = await get(`${base}/v1/transparency/head`);
    current = parseJson(currentBytes, 'current head');
    keys = await loadKeys({ base, file: o.keys });
  } catch (e) {
    return finish([`afrates transparency log monitor: ${base}`, `FAIL input: ${e.message}`, 'result: FAIL (input)'], true);
  }
  const first = obj(saved).tree_size;
  const second = obj(current).tree_size;
  let proof;
  let proofError;
  if (Number.isSafeInteger(first) && Number.isSafeInteger(second) && first > 0 && first < second) {
    try {
      proof = parseJson(await get(`${base}/v1/transparency/proof/consistency?first=${first}&second=${second}`), 'consistency proof');
    } catch (e) {
      proofError = e.message;
    }
  }
  const r = monitor({ saved, current, keys, proof, proofError });
  const failed = [...new Set(r.failed)];
  const out = [`afrates transparency log monitor: ${base}`, ...r.lines, failed.length ? `result: FAIL (${failed.join(', ')})` : `result: ok, the log only grew (${first} -> ${second} entries)`];
  if (o.save && failed.length) out.push(`not saved: ${o.head} keeps the saved head`);
  else if (o.save) {
    try {
      const tmp = `${o.head}.tmp-${process.pid}`;
      fs.writeFileSync(tmp, currentBytes);
      fs.renameSync(tmp, o.head);
      out.push(`saved: ${o.head} now holds the current head (${second} entries)`);
    } catch (e) {
      out.push(`FAIL save: cannot write ${o.head}: ${e.code ?? e.message}`);
      return finish(out, true);
    }
  }
  return finish(out, failed.length > 0);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  if (o.monitor) return runMonitor(o);
  let input;
  try {
    input = await load(o);
  } catch (e) {
    process.stdout.write(`FAIL input: ${e.message}\nresult: FAIL (input)\n`);
    process.exit(1);
  }
  const r = verify({ ...input, hmacSecret: o['hmac-secret'] });
  const s = r.summary;
  const { kind, id } = recordKind(input.certificate);
  const out = [`afrates ${kind} ${typeof id === 'string' ? id : '(no id)'}`];
  if (s) {
    out.push(`pair: ${text(s.pair)}`, `time: ${text(s.time)}`, `rate: ${s.rate === null ? 'none' : s.rate}`, `venues used: ${s.used.join(', ') || 'none'}`, `venues excluded: ${s.excluded.join(', ') || 'none'}`);
  }
  out.push(...r.lines, r.result());
  return finish(out, r.failed.length > 0);
}

// run as a program; imported (the tests check the log's algorithms against RFC 9162's definitions), it only exports them
if (process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href) await main();

export { verifyConsistency, verifyInclusion };
