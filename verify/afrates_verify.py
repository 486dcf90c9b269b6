#!/usr/bin/env python3
"""afrates_verify.py: checks an afrates certificate or fixing against its replication bundle and
the transparency log, alone; and, as a monitor, that the log only grew since a head you kept.

A second, independent implementation of verify/afrates-verify.mjs, written from the published
methodology (sections 4 to 16) and RFC 9162: Python 3 (as Debian 12 ships it, 3.11), the standard
library, and `cryptography` for Ed25519 (Debian's python3-cryptography, 38 or later). Numbers are
recomputed with exact fractions (fractions.Fraction) from the bundle's decimal strings, never
binary floating point, and rounded once, half-even, as the methodology says.

  python3 afrates_verify.py --certificate cert.json --bundle bundle.json [--keys keys.json] [--head head.json --proof proof.json]
  python3 afrates_verify.py --url https://api.afrates.example --key API_KEY --pair BTCNGN --time 2026-11-24T10:05:00+00:00
  python3 afrates_verify.py --url https://api.afrates.example --key API_KEY --pair BTCNGN --fixing local --date 2026-11-24
  python3 afrates_verify.py --monitor --url https://api.afrates.example --head saved-head.json [--keys keys.json] [--save]

Each check prints one line, `ok <check>: ...`, `FAIL <check>: ...` or `skip <check>: ...`, then
the result; the report is the same, line for line, as the Node verifier's. Exit status: 0 when
every check holds, 1 when any fails, 2 for a usage error.

Canonical JSON (what is hashed and signed) is written as JavaScript's JSON.stringify writes it:
keys sorted by UTF-16 code unit, numbers in JavaScript's shortest form (1e-7, 100000000, not
1e-07 or 100000000.0). One limit: an integer beyond 2^53 in a signed document is written as
JavaScript would have parsed it (a double), which is what the service signed.
"""
import base64
import datetime
import gzip
import hashlib
import hmac
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from fractions import Fraction

try:
    from zoneinfo import ZoneInfo
except ImportError:  # the fixing's zone check then fails, saying so
    ZoneInfo = None

try:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
except ImportError:  # the signature checks then fail, saying so; everything else still runs
    Ed25519PublicKey = None

USAGE = """usage:
  python3 afrates_verify.py --certificate FILE --bundle FILE [--keys FILE] [--head FILE --proof FILE | --no-log] [--hmac-secret SECRET]
  python3 afrates_verify.py --url BASE_URL --key API_KEY --pair PAIR --time TIMESTAMP [--no-log] [--hmac-secret SECRET]
  python3 afrates_verify.py --url BASE_URL --key API_KEY --pair PAIR --fixing local|utc --date YYYY-MM-DD [--no-log] [--hmac-secret SECRET]
  python3 afrates_verify.py --monitor --url BASE_URL --head FILE [--keys FILE] [--save]

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

Exit status: 0 every check holds, 1 a check failed, 2 usage error."""

# ---- The published parameters this verifier knows (methodology 1.0.0, its parameter table) ----

METHODOLOGY = "1.0.0"
PUBLISHED = {
    "bucket_seconds": 300,
    "rate_significant_digits": 12,
    "rounding": "half_even",
    "divergence_pct_decimals": 4,
    "confidence_decimals": 3,
    "outlier_limit": 0.05,
    "outlier_min_venues": 3,
    "verified_pct": 2,
    "caution_pct": 5,
    "verified_pct_ngn": 5,
    "caution_pct_ngn": 10,
    "fresh_seconds": 900,
    "stale_seconds": 3600,
    "live_window_hours": 24,
    "synthetic_lookback_hours": 1,
    "fx_fresh_hours": 36,
    "fx_fallback_hours": 720,
    "agreement": 0.005,
    "dispersion_scale": 0.01,
    "age_grace_seconds": 300,
    "age_decay_seconds": 3600,
    "restatement_threshold_pct": 0.2,
    "restatement_window_hours": 24,
    "fixing_local_time": "16:00",
    "fixing_utc_time": "00:00",
    "fixing_window_minutes": 60,
    "fixing_lookback_hours": 48,
}
# An operator setting, served as in force: any value is allowed; it changes when a bucket settles, not its rate.
OPERATOR_SETTINGS = {"settle_after_seconds"}
# The parameters used as exact fractions or percents (the others are counts, digits and seconds).
EXACT = ["outlier_limit", "verified_pct", "caution_pct", "verified_pct_ngn", "caution_pct_ngn", "agreement", "dispersion_scale"]
# Each quote currency's home zone (IANA), where its local fixing is taken (methodology section 14).
QUOTE_ZONES = {"NGN": "Africa/Lagos", "ZAR": "Africa/Johannesburg", "KES": "Africa/Nairobi", "GHS": "Africa/Accra", "UGX": "Africa/Kampala"}

ZERO = Fraction(0)
ONE = Fraction(1)
HUNDRED = Fraction(100)
HOUR_US = 3_600_000_000
MINUTE_US = 60_000_000


class UsageError(Exception):
    pass


def is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


# ---- Exact decimals ----

DECIMAL = re.compile(r"([+-]?)([0-9]+)(?:\.([0-9]+))?")


def decimal(text):
    """A plain decimal ("123.4500", "-0.1", "7") exactly; None for anything else."""
    m = DECIMAL.fullmatch(text) if isinstance(text, str) else None
    if not m:
        return None
    frac = m.group(3) or ""
    n = int(m.group(2) + frac) * (-1 if m.group(1) == "-" else 1)
    return Fraction(n, 10 ** len(frac))


def number_value(x):
    """A JSON number exactly as the decimal JavaScript writes it (its shortest round-trip form)."""
    if not is_number(x):
        return None
    if isinstance(x, int):
        return Fraction(x) if abs(x) <= 2**53 else Fraction(repr(float(x)))
    if x != x or x in (float("inf"), float("-inf")):
        return None
    return Fraction(repr(x))


def exact_param(v):
    return number_value(v) if is_number(v) else decimal(str(v))


def round_half_even(n, d):
    """n / d to an integer, ties to the even neighbour (d > 0)."""
    neg = n < 0
    a = -n if neg else n
    r, rem = divmod(a, d)
    twice = 2 * rem
    if twice > d or (twice == d and r % 2 == 1):
        r += 1
    return -r if neg else r


def plain(scaled, places):
    """An integer times 10^-places as a plain decimal without trailing zeros."""
    neg = scaled < 0
    digits = str(-scaled if neg else scaled)
    if places > 0:
        digits = digits.rjust(places + 1, "0")
        whole, frac = digits[:-places], digits[-places:].rstrip("0")
        digits = f"{whole}.{frac}" if frac else whole
    elif places < 0 and digits != "0":
        digits += "0" * -places
    return f"-{digits}" if neg and digits != "0" else digits


def fixed(r, places):
    """Rounded half-even to `places` decimals, plain decimal string."""
    if places >= 0:
        return plain(round_half_even(r.numerator * 10**places, r.denominator), places)
    return plain(round_half_even(r.numerator, r.denominator * 10**-places), places)


def significant(r, digits):
    """Rounded half-even to `digits` significant digits, plain decimal without trailing zeros."""
    if r == 0:
        return "0"
    a = abs(r)
    e = len(str(a.numerator)) - len(str(a.denominator))

    def at_least(k):
        return a.numerator >= a.denominator * 10**k if k >= 0 else a.numerator * 10**-k >= a.denominator

    while not at_least(e):
        e -= 1
    while at_least(e + 1):
        e += 1
    return fixed(r, digits - 1 - e)


def exact_text(r):
    """A terminating fraction written exactly (sums of decimals always terminate)."""
    places = 0
    while (r.numerator * 10**places) % r.denominator != 0:
        places += 1
        if places > 400:
            return f"{r.numerator}/{r.denominator}"
    return plain((r.numerator * 10**places) // r.denominator, places)


def median(values):
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


# ---- Canonical JSON, byte for byte as JavaScript writes it ----


def js_number(x):
    """A number as JavaScript's Number::toString writes it (JSON.stringify does the same)."""
    if isinstance(x, int):
        if abs(x) <= 2**53:
            return str(x)
        x = float(x)
    if x != x or x in (float("inf"), float("-inf")):
        return "null"
    if x == 0:
        return "0"
    text = repr(x)  # the shortest digits that round-trip, as JavaScript picks them
    sign = "-" if text.startswith("-") else ""
    text = text.lstrip("-")
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    lead = len(digits) - len(digits.lstrip("0"))
    s = digits.lstrip("0").rstrip("0")
    k = len(s)
    n = len(whole) - lead + int(exp or 0)  # the value is 0.s x 10^n
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + s
    else:
        e = n - 1
        out = (s if k == 1 else s[0] + "." + s[1:]) + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def js_string(s):
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch in ESCAPES:
            out.append(ESCAPES[ch])
        elif c < 0x20 or 0xD800 <= c <= 0xDFFF:
            out.append("\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def utf16_key(k):
    return k.encode("utf-16-be", "surrogatepass")


def canonical(value):
    """JSON with keys sorted at every level and no whitespace, as JavaScript writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if is_number(value):
        return js_number(value)
    if isinstance(value, str):
        return js_string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(js_string(k) + ":" + canonical(value[k]) for k in sorted(value, key=utf16_key)) + "}"
    raise TypeError(f"not JSON: {type(value).__name__}")


MISSING = object()


def obj(x):
    """Reading a document that may be malformed: anything that is not an object reads as an empty one."""
    return x if isinstance(x, dict) else {}


def arr(x):
    """... and anything that is not a list as an empty list."""
    return x if isinstance(x, list) else []


def is_integer(x):
    """A JSON number that is whole (JavaScript's Number.isInteger)."""
    return is_number(x) and (isinstance(x, int) or x.is_integer())


def show(v):
    """A value as JSON, for a report line."""
    return canonical(v)


def text(v):
    """A string as it is, anything else as JSON."""
    return v if isinstance(v, str) else show(v)


# ---- Times: ISO 8601 to integer microseconds since the epoch (bundles write microseconds) ----

TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?(Z|[+-][0-9]{2}:[0-9]{2})")
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(text):
    m = TIME.fullmatch(text) if isinstance(text, str) else None
    if not m:
        return None
    try:
        t = datetime.datetime(*(int(m.group(i)) for i in range(1, 7)), tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    offset = 0
    zone = m.group(8)
    if zone != "Z":
        offset = (-1 if zone[0] == "-" else 1) * (int(zone[1:3]) * 60 + int(zone[4:6]))
    seconds = (t - EPOCH) // datetime.timedelta(seconds=1) - offset * 60
    return seconds * 1_000_000 + int((m.group(7) or "").ljust(6, "0"))


def iso(us):
    """Microseconds as the contract writes a time: 2026-11-24T10:05:00+00:00 (fraction only when there is one)."""
    seconds, fraction = divmod(us, 1_000_000)
    text = (EPOCH + datetime.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}{'.' + str(fraction).rjust(6, '0') if fraction else ''}+00:00"


def zone_offset(zone, us):
    """A zone's offset from UTC at an instant (microseconds), as +HH:MM, from the IANA time-zone data; None for a zone unknown here."""
    if ZoneInfo is None:
        return None
    try:
        tz = ZoneInfo(zone)
    except (KeyError, ValueError, OSError):
        return None
    offset = (EPOCH + datetime.timedelta(seconds=us // 1_000_000)).astimezone(tz).utcoffset()
    minutes = round(offset.total_seconds() / 60)
    m = abs(minutes)
    return f"{'-' if minutes < 0 else '+'}{m // 60:02d}:{m % 60:02d}"


# ---- The transparency log's hashes (RFC 9162 section 2.1): SHA-256, leaves 0x00 || entry, nodes 0x01 || left || right ----


def sha256(*parts):
    return hashlib.sha256(b"".join(parts)).digest()


def leaf_hash_of(entry_text):
    return sha256(b"\x00", entry_text.encode("utf-8"))


def node_hash(left, right):
    return sha256(b"\x01", left, right)


HEX64 = re.compile(r"[0-9a-f]{64}")


def is_hex64(h):
    return isinstance(h, str) and HEX64.fullmatch(h) is not None


def verify_inclusion(index, size, hash_, path, root):
    """RFC 9162 section 2.1.3.2: does `path` (hashes) prove the leaf `hash_` at `index` in the tree of `size` leaves whose root is `root`?"""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, hash_
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = node_hash(p, r)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(first, second, first_root, second_root, path):
    """RFC 9162 section 2.1.4.2: does `path` prove the tree of `first` leaves (root `first_root`) a prefix of the tree of `second` (root `second_root`)? 0 < first < second."""
    if not path:
        return False
    # first a power of two: its root is a node of the proof the RFC leaves out
    p = [first_root, *path] if first & (first - 1) == 0 else list(path)
    fn, sn = first - 1, second - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = p[0]
    for c in p[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if fn % 2 == 0:
                while not (fn % 2 == 1 or fn == 0):
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return fr == first_root and sr == second_root and sn == 0


# ---- The methodology's rules (sections 4 to 9), exactly ----


def outliers(prices, limit, min_venues):
    """Section 5's outlier rule for one bucket: indexes of the venues left out (see the Node verifier)."""

    def deviation(i, among):
        m = median([prices[j] for j in among if j != i])
        return abs(prices[i] - m) / m

    kept = list(range(len(prices)))
    out = []
    while len(kept) >= min_venues and 2 * (len(out) + 1) < len(prices):
        furthest, by = -1, ZERO
        for i in kept:
            d = deviation(i, kept)
            if d > limit and d > by:
                furthest, by = i, d
        if furthest < 0:
            break
        out.append(furthest)
        kept.remove(furthest)
    if not out:
        return []
    agree = len(kept) < 2 or all(deviation(i, kept) <= limit for i in kept)
    return out if agree else []


def recompute(bundle, p):
    """Everything the certificate states, recomputed from the bundle alone."""
    window = obj(bundle.get("window"))
    start = micros(window.get("start"))
    end = micros(window.get("end"))
    problems = []
    if start is None or end is None:
        problems.append("the bundle has no window")
    if not isinstance(bundle.get("trades"), list):
        problems.append("the bundle has no list of trades")
    if not isinstance(bundle.get("venues"), list):
        problems.append("the bundle has no list of venues")
    venues = {}
    seen = set()
    for i, raw in enumerate(arr(bundle.get("trades"))):
        t = obj(raw)
        price = decimal(t.get("price"))
        amount = decimal(t.get("amount"))
        time = micros(t.get("time"))
        where = f"trade {i} ({show(t.get('exchange'))} {show(t.get('trade_id'))})"
        if not isinstance(t.get("exchange"), str):
            problems.append(f"{where}: no venue")
            continue
        if price is None or amount is None or price <= 0 or amount <= 0:
            problems.append(f"{where}: price and amount must be positive decimal strings")
            continue
        if time is None or start is None or end is None or time < start or time >= end:
            problems.append(f"{where}: time {show(t.get('time'))} is outside the window")
            continue
        key = (t["exchange"], show(t.get("trade_id")), time)
        if key in seen:
            problems.append(f"{where}: listed twice")
            continue
        seen.add(key)
        ex = t["exchange"]
        v = venues.get(ex) or {"exchange": ex, "pv": ZERO, "volume": ZERO, "trades": 0}
        venues[ex] = {"exchange": ex, "pv": v["pv"] + price * amount, "volume": v["volume"] + amount, "trades": v["trades"] + 1}
    traded = sorted(venues.values(), key=lambda v: utf16_key(v["exchange"]))
    vwaps = [v["pv"] / v["volume"] for v in traded]
    out = set(outliers(vwaps, p["outlier_limit"], p["outlier_min_venues"]))
    used = [v for i, v in enumerate(traded) if i not in out]
    used_vwaps = [x for i, x in enumerate(vwaps) if i not in out]
    excluded = [{"exchange": v["exchange"], "reason": "outlier"} for i, v in enumerate(traded) if i in out]
    for raw in arr(bundle.get("venues")):
        v = obj(raw)
        if isinstance(v.get("exchange"), str) and v["exchange"] in venues:
            continue
        # listed, no trade: quiet (no_trades) if it had collected past the window's end, else behind (stale)
        through = micros(v.get("collected_through"))
        excluded.append({"exchange": text(v.get("exchange")), "reason": "no_trades" if through is not None and end is not None and through >= end else "stale"})
    excluded.sort(key=lambda e: utf16_key(e["exchange"]))
    rate = sum((v["pv"] for v in used), ZERO) / sum((v["volume"] for v in used), ZERO) if used else None

    # the synthetic cross-rate: VWAP(BASE/USDT) x USD/QUOTE; USDT and USDC are 1 USD
    inputs = obj(bundle.get("synthetic"))
    fx = inputs.get("fx") if isinstance(inputs.get("fx"), dict) else None
    leg = inputs.get("usdt_leg") if isinstance(inputs.get("usdt_leg"), dict) else None
    usd_base = bundle.get("base") in ("USDT", "USDC")
    synthetic_problems = []
    if not isinstance(bundle.get("synthetic"), dict):
        synthetic_problems.append("the bundle has no synthetic inputs")
    if inputs.get("fx") is not None and fx is None:
        synthetic_problems.append("the FX rate is not an object")
    if inputs.get("usdt_leg") is not None and leg is None:
        synthetic_problems.append("the USDT leg is not an object")
    synthetic = None
    fx_rate = decimal(fx.get("units_per_usd")) if fx is not None else None
    if fx is not None and not (fx_rate is not None and fx_rate > 0):
        synthetic_problems.append(f"FX units_per_usd {show(fx.get('units_per_usd'))} is not a positive decimal")
    if leg is not None and (usd_base or leg.get("pair") != f"{text(bundle.get('base'))}USDT"):
        synthetic_problems.append(f"USDT leg {show(leg.get('pair'))} for a {show(bundle.get('base'))} pair")
    if leg is None and not usd_base and fx is not None:
        synthetic_problems.append(f"no USDT leg for a {show(bundle.get('base'))} pair")
    leg_sums = [{"pv": decimal(obj(raw).get("pv")), "volume": decimal(obj(raw).get("volume"))} for raw in arr((leg or {}).get("venues"))]
    if any(v["pv"] is None or v["volume"] is None or v["volume"] < 0 for v in leg_sums):
        synthetic_problems.append("a USDT-leg venue has no decimal pv and volume")
    if fx_rate is not None and fx_rate > 0 and not synthetic_problems:
        if usd_base:
            synthetic = fx_rate
        else:
            volume = sum((v["volume"] for v in leg_sums), ZERO)
            if volume > 0:
                synthetic = sum((v["pv"] for v in leg_sums), ZERO) / volume * fx_rate

    divergence = (rate - synthetic) / synthetic if rate is not None and synthetic is not None and synthetic > 0 else None
    if bundle.get("quote") == "NGN":
        verified, caution = p["verified_pct_ngn"], p["caution_pct_ngn"]
    else:
        verified, caution = p["verified_pct"], p["caution_pct"]
    status = "unverified"
    if divergence is not None:
        pct = abs(divergence) * HUNDRED
        status = "verified" if pct <= verified else "caution" if pct <= caution else "unverified"

    # confidence = S x D x V (a certified window's age is 0, so A = 1)
    confidence = None
    if rate is not None:
        s = ONE - Fraction(1, 2 ** (len(used) + 1))
        dispersion = ZERO
        if len(used_vwaps) >= 2:
            ordered = sorted(used_vwaps)
            mean = sum(used_vwaps, ZERO) / len(used_vwaps)
            dispersion = (ordered[-1] - ordered[0]) / mean
        excess = dispersion - p["agreement"]
        d = ONE / (ONE + excess / p["dispersion_scale"]) if excess > 0 else ONE
        v = Fraction(1, 2)
        if divergence is not None:
            ratio = abs(divergence) * HUNDRED / caution
            v = ONE / (ONE + ratio * ratio)
        confidence = fixed(s * d * v, p["confidence_decimals"])

    return {
        "problems": problems,
        "trade_count": len(seen),
        "used": [{"exchange": v["exchange"], "trades": v["trades"], "volume": v["volume"]} for v in used],
        "excluded": excluded,
        "rate": significant(rate, p["rate_significant_digits"]) if rate is not None else None,
        "synthetic": significant(synthetic, p["rate_significant_digits"]) if synthetic is not None else None,
        "synthetic_problems": synthetic_problems,
        "divergence_pct": fixed(divergence * HUNDRED, p["divergence_pct_decimals"]) if divergence is not None else None,
        "status": status,
        "confidence": confidence,
        "data_quality": "high" if len(used) >= 2 else "medium" if len(used) == 1 else "low",
    }


# ---- The checks ----


class Report:
    def __init__(self):
        self.lines = []
        self.failed = []
        self.skipped = []
        self.summary = None

    def ok(self, name, detail):
        self.lines.append(f"ok {name}: {detail}")

    def fail(self, name, detail):
        self.lines.append(f"FAIL {name}: {detail}")
        self.failed.append(name)

    def skip(self, name, detail):
        self.lines.append(f"skip {name}: {detail}")
        self.skipped.append(name)

    def result(self):
        """The last line: FAIL naming what failed; else ok, saying which checks were not made (the
        log's without a head and proof, the HMAC without the secret), so a verification that skipped
        some never reads as one that made them all."""
        failed = list(dict.fromkeys(self.failed))
        if failed:
            return f"result: FAIL ({', '.join(failed)})"
        skipped = list(dict.fromkeys(self.skipped))
        return f"result: ok, every check made holds; not checked: {', '.join(skipped)}" if skipped else "result: ok, every check holds"

    def check(self, name, fn):
        """Runs one check; an exception (a field missing, say) fails it with its message."""
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - any malformed input fails the check, never the run
            self.fail(name, f"could not be checked: {e}")

    def expect(self, name, failures, ok_detail):
        if failures:
            self.fail(name, "; ".join(failures))
        else:
            self.ok(name, ok_detail)


def same_number(stated, text):
    """A JSON number stated by the certificate equals a recomputed decimal string (or both are null)."""
    if text is None:
        return stated is None
    return is_number(stated) and number_value(stated) == decimal(text)


def same_set(a, b):
    return canonical(sorted(a, key=utf16_key)) == canonical(sorted(b, key=utf16_key))


BASE64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")


def verify_ed25519(keys, key_id, message, signature):
    """None when `signature` (base64) is the Ed25519 signature of `message` by the published key `key_id`, else why not."""
    if Ed25519PublicKey is None:
        return "the Python package cryptography is missing (Debian: apt-get install python3-cryptography; else pip install cryptography)"
    entry = next((k for k in keys if isinstance(k, dict) and k.get("key_id") == key_id), None)
    if entry is None:
        listed = ", ".join(show(k.get("key_id") if isinstance(k, dict) else None) for k in keys)
        return f"key {show(key_id)} is not among the published keys ({listed or 'none'})"
    try:
        key = load_pem_public_key(entry["public_key_pem"].encode("utf-8"))
    except Exception:  # noqa: BLE001
        return f"key {show(key_id)} is not a readable public key"
    if not isinstance(key, Ed25519PublicKey):
        return f"key {show(key_id)} is not an Ed25519 key"
    if not isinstance(message, str):
        return "nothing signed"
    if not isinstance(signature, str) or not BASE64.fullmatch(signature):
        return "the signature is not base64"
    try:
        key.verify(base64.b64decode(signature + "=" * (-len(signature) % 4)), message.encode("utf-8"))
        return None
    except (InvalidSignature, ValueError):
        return f"does not verify with key {show(key_id)}"


def record_kind(record):
    """A signed record's kind and id: a fixing names itself by fixing_id and carries its `fixing`."""
    cert = obj(record)
    is_fixing = "fixing_id" in cert or "fixing" in cert
    return is_fixing, "fixing" if is_fixing else "certificate", cert.get("fixing_id") if is_fixing else cert.get("certificate_id")


def verify(certificate, bundle_bytes, keys, hmac_secret, log=None):
    """Every check of one certificate or fixing against its bundle and the log (the Node verifier's checks, line for line)."""
    r = Report()
    cert = obj(certificate)
    data = obj(cert.get("data"))
    audit = obj(cert.get("audit"))
    is_fixing, kind, record_id = record_kind(cert)
    fixing = obj(cert.get("fixing"))
    parsed = MISSING
    try:
        bundle_text = bundle_bytes.decode("utf-8")
        parsed = json.loads(bundle_text)
    except ValueError:
        r.fail("bundle", "is not JSON")
    state = {"payload": None, "c": None}

    def bundle_hash():
        stated = obj(cert.get("bundle"))
        sha = hashlib.sha256(bundle_bytes).hexdigest()
        f = []
        if sha != stated.get("sha256"):
            f.append(f"sha256 of the bundle is {sha}, the certificate states {show(stated.get('sha256'))}")
        if not (is_number(stated.get("bytes")) and len(bundle_bytes) == stated.get("bytes")):
            f.append(f"the bundle has {len(bundle_bytes)} bytes, the certificate states {show(stated.get('bytes'))}")
        r.expect("bundle hash", f, f"sha256 {sha} ({len(bundle_bytes)} bytes) as the certificate states")

    r.check("bundle hash", bundle_hash)
    if parsed is MISSING:
        return r
    bundle = obj(parsed)
    window = obj(bundle.get("window"))
    methodology = obj(bundle.get("methodology"))
    params = obj(methodology.get("parameters"))
    fw = params.get("fixing_window_minutes")
    fixing_minutes = int(fw) if is_integer(fw) and fw > 0 else PUBLISHED["fixing_window_minutes"]

    r.check("bundle canonical", lambda: r.expect("bundle canonical", [] if canonical(bundle) == bundle_text else ["the bundle is not canonical JSON (keys sorted, no whitespace)"], "canonical JSON"))

    def bundle_identity():
        f = []
        start = micros(window.get("start"))
        end = micros(window.get("end"))
        time = micros(data.get("timestamp"))
        if not same_value(bundle.get("id"), record_id):
            f.append(f"bundle of {show(bundle.get('id'))}, not of {show(record_id)}")
        if bundle.get("kind") != kind:
            f.append(f"bundle kind {show(bundle.get('kind'))}")
        if is_fixing and "certificate_id" in cert:
            f.append("the record has both a certificate_id and a fixing_id")
        for k in ("pair", "base", "quote"):
            if not same_value(bundle.get(k), data.get(k)):
                f.append(f"{k} {show(bundle.get(k))} in the bundle, {show(data.get(k))} in the certificate")
        if is_fixing:
            # a fixing's time is its window's end: the fixing_window_minutes before it
            if end is None or end != time:
                f.append(f"window ends {show(window.get('end'))}, the fixing's time is {show(data.get('timestamp'))}")
            if start is None or start != micros(fixing.get("window_start")) or end != micros(fixing.get("window_end")):
                f.append(f"window {show(bundle.get('window'))}, the fixing's is {show({'start': fixing.get('window_start'), 'end': fixing.get('window_end')})}")
            if start is None or end is None or end - start != fixing_minutes * MINUTE_US:
                f.append(f"window {show(bundle.get('window'))} is not the {fixing_minutes} minutes before the fixing")
        else:
            seconds = params.get("bucket_seconds") if is_integer(params.get("bucket_seconds")) and params.get("bucket_seconds") > 0 else PUBLISHED["bucket_seconds"]
            seconds = int(seconds)
            bucket = seconds * 1_000_000
            if start is None or start != time:
                f.append(f"window starts {show(window.get('start'))}, the certificate's time is {show(data.get('timestamp'))}")
            if start is None or end is None or end - start != bucket or start % bucket != 0:
                f.append(f"window {show(bundle.get('window'))} is not one bucket of {seconds} seconds")
        if not same_value(methodology.get("version"), cert.get("methodology_version")):
            f.append(f"methodology {show(methodology.get('version'))} in the bundle, {show(cert.get('methodology_version'))} in the certificate")
        expected_id = None if time is None else f"{'FIX' if is_fixing else 'CERT'}-{text(data.get('pair'))}-{iso(time)[:19].replace('-', '').replace(':', '')}Z"
        if expected_id is None or record_id != expected_id:
            f.append(f"{kind} id {show(record_id)} does not name {show(data.get('pair'))} at {show(data.get('timestamp'))}")
        r.expect("bundle identity", f, f"{text(bundle.get('id'))}, {text(bundle.get('pair'))} from {text(window.get('start'))} to {text(window.get('end'))}")

    r.check("bundle identity", bundle_identity)

    # a fixing is taken at fixing_local_time in its quote currency's zone, or fixing_utc_time UTC, on its date there
    def check_fixing():
        f = []
        time = micros(data.get("timestamp"))
        fkind = fixing.get("kind")
        known = fkind in ("local", "utc")
        if not known:
            f.append(f"kind {show(fkind)} is neither local nor utc")
        quote = data.get("quote")
        home = QUOTE_ZONES.get(quote) if isinstance(quote, str) else None
        zone = "UTC" if fkind == "utc" else home
        if known and not same_value(fixing.get("zone"), zone):
            f.append(f"zone {show(fixing.get('zone'))}, the {fkind} fixing of a {show(quote)} pair is taken in {show(zone)}")
        clock_name = "fixing_utc_time" if fkind == "utc" else "fixing_local_time"
        clock_value = params.get(clock_name)
        clock = clock_value if isinstance(clock_value, str) and re.fullmatch(r"[0-9]{2}:[0-9]{2}", clock_value) else PUBLISHED[clock_name]
        if not same_value(fixing.get("time"), data.get("timestamp")) or not same_value(fixing.get("window_end"), data.get("timestamp")):
            f.append(f"fixing time {show(fixing.get('time'))} and window end {show(fixing.get('window_end'))}, the record's time is {show(data.get('timestamp'))}")
        if time is None or micros(fixing.get("window_start")) != time - fixing_minutes * MINUTE_US:
            f.append(f"window start {show(fixing.get('window_start'))} is not {fixing_minutes} minutes before {show(data.get('timestamp'))}")
        local = fixing.get("local_time") if isinstance(fixing.get("local_time"), str) else ""
        if time is None or micros(local) != time:
            f.append(f"local time {show(fixing.get('local_time'))} is not the instant {show(data.get('timestamp'))}")
        elif local[:19] != f"{text(fixing.get('date'))}T{clock}:00":
            f.append(f"local time {show(fixing.get('local_time'))} is not {clock} on {show(fixing.get('date'))}")
        elif zone is not None:
            offset = zone_offset(zone, time)
            if offset is None:
                f.append(f"no time-zone data for {zone} here")
            elif local[19:] != offset:
                f.append(f"local time {show(fixing.get('local_time'))}, but {zone} is at {offset} then")
        r.expect("fixing", f, f"{text(fkind)} fixing of {text(fixing.get('date'))}: {clock} in {text(zone)} ({local}) is {text(data.get('timestamp'))}, its window the {fixing_minutes} minutes before")

    if is_fixing:
        r.check("fixing", check_fixing)

    def certificate_signature():
        if keys is None:
            return r.fail("certificate signature", "no keys to check it with (give --keys, or use --url)")
        issued = {k: v for k, v in cert.items() if k != "customer"}
        rest = {k: v for k, v in audit.items() if k != "certificate_signature"}
        problem = verify_ed25519(keys, audit.get("ed25519_key_id"), canonical({**issued, "audit": rest}), audit.get("certificate_signature"))
        r.expect("certificate signature", [problem] if problem else [], f"Ed25519 over the certificate (bundle hash included) verifies with key {text(audit.get('ed25519_key_id'))}")

    r.check("certificate signature", certificate_signature)

    def payload_signature():
        if keys is None:
            return r.fail("payload signature", "no keys to check it with (give --keys, or use --url)")
        problem = verify_ed25519(keys, audit.get("ed25519_key_id"), audit.get("signed_payload"), audit.get("ed25519_signature"))
        r.expect("payload signature", [problem] if problem else [], f"Ed25519 over signed_payload verifies with key {text(audit.get('ed25519_key_id'))}")

    r.check("payload signature", payload_signature)

    def check_hmac():
        if hmac_secret is None:
            return r.skip("hmac", "no --hmac-secret given (only the server holds it)")
        if not isinstance(audit.get("signed_payload"), str):
            return r.fail("hmac", "no signed_payload")
        mac = hmac.new(hmac_secret.encode("utf-8"), audit["signed_payload"].encode("utf-8"), hashlib.sha256).hexdigest()
        ok = isinstance(audit.get("signature"), str) and hmac.compare_digest(mac, audit["signature"])
        r.expect("hmac", [] if ok else ["HMAC-SHA256 of signed_payload differs from audit.signature"], "HMAC-SHA256 of signed_payload matches audit.signature")

    r.check("hmac", check_hmac)

    def signed_payload():
        if not isinstance(audit.get("signed_payload"), str):
            return r.fail("signed payload", "no signed_payload")
        try:
            p = json.loads(audit["signed_payload"])
        except ValueError:
            return r.fail("signed payload", "signed_payload is not JSON")
        if not isinstance(p, dict):
            return r.fail("signed payload", "signed_payload is not a JSON object")
        state["payload"] = p
        f = []
        if canonical(p) != audit["signed_payload"]:
            f.append("signed_payload is not canonical JSON")
        if not same_value(p.get("pair"), data.get("pair")):
            f.append(f"pair {show(p.get('pair'))}, the certificate's is {show(data.get('pair'))}")
        if not same_value(p.get("time"), data.get("timestamp")):
            f.append(f"time {show(p.get('time'))}, the certificate's is {show(data.get('timestamp'))}")
        if show(p.get("sources")) != show(data.get("sources")):
            f.append(f"sources {show(p.get('sources'))}, the certificate's are {show(data.get('sources'))}")
        sources = data.get("sources")
        if not isinstance(sources, list) or not (is_number(data.get("vwap_sources_count")) and data.get("vwap_sources_count") == len(sources)):
            f.append(f"vwap_sources_count {show(data.get('vwap_sources_count'))} for the sources {show(sources)}")
        market = p.get("market") if p.get("market") is not None else "real"
        if not same_value(market, "simulated" if bundle.get("market") == "simulated" else "real"):
            f.append(f"market {show(market)} signed, the bundle says {show(bundle.get('market'))}")
        if is_fixing:
            if not same_value(p.get("fixing"), fixing.get("kind")):
                f.append(f"fixing {show(p.get('fixing'))} signed, the record's kind is {show(fixing.get('kind'))}")
        elif "fixing" in p:
            f.append(f"a fixing's payload (fixing {show(p.get('fixing'))}) on a certificate")
        # a fixing without trades signs a null rate; everything else a decimal string
        if not (isinstance(p.get("rate"), str) and decimal(p.get("rate")) is not None) and not (is_fixing and "rate" in p and p["rate"] is None):
            f.append(f"rate {show(p.get('rate'))} is not a decimal string")
        what = "pair, time, sources and fixing kind" if is_fixing else "pair, time and sources"
        r.expect("signed payload", f, f"{what} as the certificate states" + (" (simulated market, so signed)" if market == "simulated" else ""))

    r.check("signed payload", signed_payload)

    # parameters: the bundle's, checked against the published ones (a value unusable for
    # computing is replaced by the published one, and the check fails)
    def parameters():
        f = []
        if methodology.get("version") != METHODOLOGY:
            f.append(f"methodology {show(methodology.get('version'))}: this verifier knows {METHODOLOGY} only")
        for name, value in PUBLISHED.items():
            if name not in params:
                f.append(f"{name} missing")
            elif not same_value(params[name], value):
                f.append(f"{name} is {show(params[name])}, published {show(value)}")
        for name in params:
            if name not in PUBLISHED and name not in OPERATOR_SETTINGS:
                f.append(f"{name} is not a {METHODOLOGY} parameter")
        lag = f" (settle_after_seconds {show(params['settle_after_seconds'])}, an operator setting)" if "settle_after_seconds" in params else ""
        r.expect("parameters", f, f"the published {METHODOLOGY} values{lag}")

    r.check("parameters", parameters)
    p = {}
    for name, published in PUBLISHED.items():
        value = params[name] if name in params else published
        if name in EXACT:
            p[name] = (exact_param(value) if is_number(value) or isinstance(value, str) else None) or exact_param(published)
        elif is_number(published):
            p[name] = int(value) if is_integer(value) and 0 <= value <= 100_000 else published
        else:
            p[name] = value

    def trades():
        state["c"] = recompute(bundle, p)
        c = state["c"]
        r.expect("trades", c["problems"], "no trade in the window" if c["trade_count"] == 0 else f"{trades_text(c['trade_count'])}, all inside the window, each once")

    r.check("trades", trades)
    c = state["c"]
    if c is None:
        return r
    payload = state["payload"] or {}

    def check_rate():
        f = []
        if c["rate"] is None and not is_fixing:
            f.append("no trade in the window: no rate, yet a certificate was issued")
        elif c["rate"] is None:
            # minimum-data rule: a fixing without trades publishes no rate, and says so
            if not ("rate" in payload and payload["rate"] is None):
                f.append(f"no trade in the window, yet the signed rate is {show(payload.get('rate'))}")
            if not ("rate" in data and data["rate"] is None):
                f.append(f"no trade in the window, yet data.rate is {show(data.get('rate'))}")
            if not isinstance(cert.get("notes"), str):
                f.append("no trade in the window, and no notes say so")
        else:
            if not same_value(payload.get("rate"), c["rate"]):
                f.append(f"recomputed {c['rate']}, signed {show(payload.get('rate'))}")
            if not same_number(data.get("rate"), c["rate"]):
                f.append(f"recomputed {c['rate']}, data.rate {show(data.get('rate'))}")
        ok_detail = "none: no trade in the window, so no rate (minimum-data rule), as signed" if c["rate"] is None else f"{c['rate']} recomputed from {trades_text(c['trade_count'])} equals the signed string digit for digit"
        r.expect("rate", f, ok_detail)

    r.check("rate", check_rate)

    inputs = obj(cert.get("inputs"))

    def check_venues():
        f = []
        stated = [obj(v) for v in arr(inputs.get("venues"))]
        by_ex = {text(v.get("exchange")): v for v in stated}
        if len(stated) != len(c["used"]) or any(v["exchange"] not in by_ex for v in c["used"]):
            f.append(f"venues used {show([v['exchange'] for v in c['used']])}, the certificate lists {show([v.get('exchange') for v in stated])}")
        for v in c["used"]:
            s = by_ex.get(v["exchange"])
            if s is None:
                continue
            if not (is_number(s.get("trades")) and s.get("trades") == v["trades"]):
                f.append(f"{v['exchange']}: {trades_text(v['trades'])}, the certificate says {show(s.get('trades'))}")
            vol = decimal(s.get("volume"))
            if vol is None or vol != v["volume"]:
                f.append(f"{v['exchange']}: volume {exact_text(v['volume'])}, the certificate says {show(s.get('volume'))}")
        if not same_set([text(x) for x in arr(data.get("sources"))], [v["exchange"] for v in c["used"]]):
            f.append(f"data.sources {show(data.get('sources'))}, recomputed {show([v['exchange'] for v in c['used']])}")
        r.expect("venues", f, "; ".join(f"{v['exchange']} {trades_text(v['trades'])}, volume {exact_text(v['volume'])}" for v in c["used"]) or "none")

    r.check("venues", check_venues)

    def check_exclusions():
        stated = [f"{text(obj(e).get('exchange'))}:{text(obj(e).get('reason'))}" for e in arr(inputs.get("excluded"))]
        mine = [f"{e['exchange']}:{e['reason']}" for e in c["excluded"]]
        r.expect("exclusions", [] if same_set(stated, mine) else [f"recomputed {show(mine)}, the certificate says {show(stated)}"], ", ".join(mine).replace(":", " ") if mine else "none")

    r.check("exclusions", check_exclusions)

    def check_fx():
        fx = obj(bundle.get("synthetic")).get("fx")
        if not isinstance(fx, dict):
            return r.ok("fx", "no FX rate in force: no synthetic price")
        f = []
        hour = micros(fx.get("hour"))
        start = micros(window.get("start"))
        if start is None:
            return r.fail("fx", "the bundle has no window")
        window_hour = start - start % HOUR_US
        if not same_value(fx.get("currency"), bundle.get("quote")):
            f.append(f"FX of {show(fx.get('currency'))} for a {show(bundle.get('quote'))} pair")
        if hour != window_hour:
            f.append(f"FX of the hour {show(fx.get('hour'))}, the window's hour starts at {iso(window_hour)}")
        if hour is None:
            return r.expect("fx", f, "")
        fresh_hours = params["fx_fresh_hours"] if "fx_fresh_hours" in params else PUBLISHED["fx_fresh_hours"]
        if not is_integer(fresh_hours):
            return r.fail("fx", f"fx_fresh_hours {show(fresh_hours)} is not a whole number of hours")
        fresh_from = hour - int(fresh_hours) * HOUR_US
        observations = [obj(o) for o in arr(fx.get("observations"))]
        for o in observations:
            if micros(o.get("time")) is None or micros(o.get("source_updated_at")) is None or decimal(o.get("units_per_usd")) is None:
                f.append(f"observation {show(o.get('source'))} is not well formed")
            elif micros(o["time"]) > hour:
                f.append(f"observation {show(o.get('source'))} at {show(o.get('time'))} is after the hour")
        fresh = [
            o
            for o in observations
            if decimal(o.get("units_per_usd")) is not None
            and micros(o.get("source_updated_at")) is not None
            and micros(o.get("source_updated_at")) >= fresh_from
            and micros(o.get("time")) is not None
            and micros(o.get("time")) <= hour
        ]
        if not (is_number(fx.get("fresh_sources")) and fx.get("fresh_sources") == len(fresh)):
            f.append(f"fresh_sources {show(fx.get('fresh_sources'))}, the observations hold {len(fresh)} fresh")
        if fresh:
            m = median([decimal(o["units_per_usd"]) for o in fresh])
            stated = decimal(fx.get("units_per_usd"))
            if stated is None or m != stated:
                f.append(f"units_per_usd {show(fx.get('units_per_usd'))}, the median of the fresh observations is {exact_text(m)}")
            r.expect("fx", f, f"{text(fx.get('currency'))} {text(fx.get('units_per_usd'))} per USD, the median of {len(fresh)} fresh source(s) at {text(fx.get('hour'))}")
        else:
            r.expect("fx", f, f"{text(fx.get('currency'))} {text(fx.get('units_per_usd'))} per USD: no source fresh (fx_stale), the newest observation within fx_fallback_hours")

    r.check("fx", check_fx)

    v = obj(cert.get("verification"))

    def check_synthetic():
        f = list(c["synthetic_problems"])
        if not same_number(v.get("synthetic_price"), c["synthetic"]):
            f.append(f"recomputed {text(c['synthetic'])}, the certificate says {show(v.get('synthetic_price'))}")
        r.expect("synthetic price", f, "none (no USDT-leg trade or no FX rate)" if c["synthetic"] is None else c["synthetic"])

    r.check("synthetic price", check_synthetic)
    r.check(
        "divergence",
        lambda: r.expect(
            "divergence",
            [] if same_number(v.get("divergence_pct"), c["divergence_pct"]) else [f"recomputed {text(c['divergence_pct'])}%, the certificate says {show(v.get('divergence_pct'))}"],
            "none" if c["divergence_pct"] is None else f"{c['divergence_pct']}%",
        ),
    )
    r.check("status", lambda: r.expect("status", [] if same_value(v.get("status"), c["status"]) else [f"recomputed {c['status']}, the certificate says {show(v.get('status'))}"], c["status"]))
    r.check(
        "confidence",
        lambda: r.expect("confidence", [] if same_number(v.get("confidence"), c["confidence"]) else [f"recomputed {text(c['confidence'])}, the certificate says {show(v.get('confidence'))}"], text(c["confidence"])),
    )
    r.check(
        "data quality",
        lambda: r.expect("data quality", [] if same_value(v.get("data_quality"), c["data_quality"]) else [f"recomputed {c['data_quality']}, the certificate says {show(v.get('data_quality'))}"], c["data_quality"]),
    )

    def bundle_result():
        res = obj(bundle.get("result"))
        f = []
        if not same_value(res.get("rate"), c["rate"]):
            f.append(f"rate {show(res.get('rate'))}")
        if not same_value(res.get("synthetic_price"), c["synthetic"]):
            f.append(f"synthetic_price {show(res.get('synthetic_price'))}")
        if not same_number(res.get("divergence_pct"), c["divergence_pct"]):
            f.append(f"divergence_pct {show(res.get('divergence_pct'))}")
        if not same_value(res.get("status"), c["status"]):
            f.append(f"status {show(res.get('status'))}")
        if not same_number(res.get("confidence"), c["confidence"]):
            f.append(f"confidence {show(res.get('confidence'))}")
        if not same_value(res.get("data_quality"), c["data_quality"]):
            f.append(f"data_quality {show(res.get('data_quality'))}")

        def venue(s):
            s = obj(s)
            return f"{text(s.get('exchange'))}:{text(s.get('trades'))}:{text(s.get('volume'))}"

        def exclusion(e):
            e = obj(e)
            return f"{text(e.get('exchange'))}:{text(e.get('reason'))}"

        if not same_set([venue(s) for s in arr(res.get("sources"))], [venue(s) for s in arr(inputs.get("venues"))]):
            f.append("sources differ from the certificate's inputs.venues")
        if not same_set([exclusion(e) for e in arr(res.get("excluded"))], [exclusion(e) for e in c["excluded"]]):
            f.append(f"excluded {show(res.get('excluded'))}")
        r.expect("bundle result", [f"the bundle's stated result differs from the recomputation: {', '.join(f)}"] if f else [], "the bundle states the recomputed result")

    r.check("bundle result", bundle_result)

    record = {k: v for k, v in cert.items() if k != "customer"}
    log_checks(
        r,
        log or {"skip": "not asked for"},
        keys,
        {
            "id": record_id,
            "kind": kind,
            "pair": data.get("pair"),
            "time": data.get("timestamp"),
            "rate": payload.get("rate"),
            "certificate_sha256": sha256(canonical(record).encode("utf-8")).hex(),
            "bundle_sha256": sha256(bundle_bytes).hex(),
        },
    )

    r.summary = {
        "pair": data.get("pair"),
        "time": data.get("timestamp"),
        "rate": c["rate"],
        "used": [f"{u['exchange']} ({trades_text(u['trades'])})" for u in c["used"]],
        "excluded": [f"{e['exchange']} ({e['reason']})" for e in c["excluded"]],
    }
    return r


def trades_text(n):
    return f"{n} trade{'' if n == 1 else 's'}"


def same_value(a, b):
    """a === b in JavaScript, for parsed JSON: 300 and 300.0 are one number, true is not 1, two objects or lists are never the same."""
    if is_number(a) and is_number(b):
        return number_value(a) == number_value(b)
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return type(a) is type(b) and a == b


# ---- The transparency log (methodology section 16) ----

HEAD_FIELDS = ["root_hash", "timestamp", "tree_size"]


def is_size(x):
    """A whole number of entries (JavaScript's Number.isSafeInteger, and not negative)."""
    return is_integer(x) and 0 <= x <= 2**53 - 1


def check_head(r, name, head, keys):
    """Checks a signed tree head as GET /v1/transparency/head serves it (see the Node verifier); returns (size, root bytes) when those are well formed, else None."""
    h = obj(head)
    f = []
    size_ok = is_size(h.get("tree_size"))
    root_ok = is_hex64(h.get("root_hash"))
    if not isinstance(head, dict):
        f.append("the head is not a JSON object")
    else:
        if not size_ok:
            f.append(f"tree_size {show(h.get('tree_size'))} is not a whole number")
        if not root_ok:
            f.append(f"root_hash {show(h.get('root_hash'))} is not a SHA-256 hash in hex")
        if micros(h.get("timestamp")) is None:
            f.append(f"timestamp {show(h.get('timestamp'))} is not a time")
        if h.get("algorithm") != "Ed25519":
            f.append(f"algorithm {show(h.get('algorithm'))}, not Ed25519")
        signed = None
        if isinstance(h.get("signed_payload"), str):
            try:
                signed = json.loads(h["signed_payload"])
            except ValueError:
                signed = None
        if not isinstance(signed, dict):
            f.append("signed_payload is not a JSON object")
        else:
            if canonical(signed) != h["signed_payload"]:
                f.append("signed_payload is not canonical JSON")
            for k in HEAD_FIELDS:
                if show(signed.get(k)) != show(h.get(k)):
                    f.append(f"signed_payload's {k} is {show(signed.get(k))}, the head's {show(h.get(k))}")
            extra = [k for k in signed if k not in HEAD_FIELDS]
            if extra:
                f.append(f"signed_payload signs more than the root, time and size ({', '.join(sorted(extra, key=utf16_key))})")
        if keys is None:
            f.append("no keys to check its signature with (give --keys, or use --url)")
        else:
            problem = verify_ed25519(keys, h.get("key_id"), h.get("signed_payload"), h.get("signature"))
            if problem:
                f.append(f"the signature {problem}")
    r.expect(name, f, f"{text(h.get('tree_size'))} entries, root {text(h.get('root_hash'))}, signed {text(h.get('timestamp'))}; the signature verifies with key {text(h.get('key_id'))}")
    return (int(h["tree_size"]), bytes.fromhex(h["root_hash"])) if size_ok and root_ok else None


def entry_difference(logged, built):
    """The fields in which a logged entry (text) differs from the one built, or None when it is not a JSON object."""
    try:
        e = json.loads(logged) if isinstance(logged, str) else None
    except ValueError:
        return None
    if not isinstance(e, dict):
        return None
    return sorted((k for k in set(e) | set(built) if show(e.get(k)) != show(built.get(k))), key=utf16_key)


def log_checks(r, log, keys, built):
    """The log checks of a certificate or fixing (see the Node verifier's logChecks)."""
    if log.get("skip"):
        r.skip("log head", log["skip"])
        r.skip("log inclusion", log["skip"])
        return
    tree = None
    if log.get("head_error"):
        r.fail("log head", log["head_error"])
    else:
        tree = check_head(r, "log head", log.get("head"), keys)

    def inclusion():
        if log.get("proof_error"):
            return r.fail("log inclusion", log["proof_error"])
        if tree is None:
            return r.fail("log inclusion", "no signed head to prove it against")
        size, root = tree
        p = obj(log.get("proof"))
        f = []
        entry = canonical(built)
        leaf = leaf_hash_of(entry)
        if not same_value(p.get("id"), built["id"]):
            f.append(f"a proof for {show(p.get('id'))}, not for {show(built['id'])}")
        if not same_value(p.get("tree_size"), size):
            f.append(f"a proof in the tree of {show(p.get('tree_size'))} entries, the head's has {size}")
        if not same_value(p.get("entry"), entry):
            differ = entry_difference(p.get("entry"), built)
            what = f"the entry built from the {built['kind']} and its bundle"
            if differ is None:
                f.append(f"the logged entry {show(p.get('entry'))} is not a JSON object")
            elif differ:
                f.append(f"the logged entry differs from {what} in {', '.join(differ)}")
            else:
                f.append(f"the logged entry is not the canonical JSON of {what}")
        # the served leaf hash must be the served entry's; the path is checked from the entry built here
        served_leaf = leaf_hash_of(p["entry"]).hex() if isinstance(p.get("entry"), str) else None
        if not same_value(p.get("leaf_hash"), served_leaf):
            f.append(f"leaf_hash {show(p.get('leaf_hash'))} is not SHA-256(0x00 || entry) of the entry served")
        path = arr(p.get("audit_path"))
        index = p.get("leaf_index")
        if not isinstance(p.get("audit_path"), list) or any(not is_hex64(h) for h in path):
            f.append("audit_path is not a list of SHA-256 hashes in hex")
        elif not is_size(index):
            f.append(f"leaf_index {show(index)} is not a whole number")
        # (an entry that differs cannot lead there: that is said above)
        elif same_value(p.get("entry"), entry) and not verify_inclusion(int(index), size, leaf, [bytes.fromhex(h) for h in path], root):
            f.append(f"the audit path of {len(path)} hashes from leaf {show(index)} does not lead to the head's root")
        r.expect("log inclusion", f, f"{text(built['id'])} is leaf {text(index)} of the tree of {size} entries: its entry, built from the {built['kind']} and its bundle, and an audit path of {len(path)} hashes lead to the head's root")

    r.check("log inclusion", inclusion)


def monitor(saved, current, keys, proof=None, proof_error=None):
    """Monitor: the log only grew from the saved head to the current one (see the Node verifier's monitor)."""
    r = Report()
    old = check_head(r, "saved head", saved, keys)
    now = check_head(r, "current head", current, keys)

    def consistency():
        if old is None or now is None:
            return r.fail("consistency", "a head without a size and root cannot be compared")
        (old_size, old_root), (now_size, now_root) = old, now
        grew = f"{old_size} -> {now_size} entries"
        if now_size < old_size:
            return r.fail("consistency", f"the current head has {now_size} entries, fewer than the {old_size} of the saved one: the log lost entries")
        if now_size == old_size:
            same = old_root == now_root
            return r.expect("consistency", [] if same else [f"the same size, {now_size} entries, but another root: the log changed entries it had signed"], f"the same size, {now_size} entries, and the same root")
        if old_size == 0:
            # the empty tree's root is SHA-256 of nothing, and every tree extends it
            return r.expect("consistency", [] if old_root == sha256() else ["the saved head has no entries but is not the root of the empty tree"], f"{grew}: the empty tree is a prefix of every tree")
        if proof_error:
            return r.fail("consistency", proof_error)
        p = obj(proof)
        f = []
        path = arr(p.get("proof"))
        if not same_value(p.get("first"), old_size) or not same_value(p.get("second"), now_size):
            f.append(f"a proof from {show(p.get('first'))} to {show(p.get('second'))} entries, not from {old_size} to {now_size}")
        if not isinstance(p.get("proof"), list) or any(not is_hex64(h) for h in path):
            f.append("proof is not a list of SHA-256 hashes in hex")
        elif not verify_consistency(old_size, now_size, old_root, now_root, [bytes.fromhex(h) for h in path]):
            f.append(f"the proof of {len(path)} hashes does not lead from the saved root to the current root: the log no longer holds the {old_size} entries it had signed, unchanged")
        r.expect("consistency", f, f"{grew}: a proof of {len(path)} hashes leads from the saved root to the current root, so the first {old_size} entries are unchanged")

    r.check("consistency", consistency)
    return r


# ---- Command line ----

VALUED = {"certificate", "bundle", "keys", "hmac-secret", "url", "key", "pair", "time", "fixing", "date", "head", "proof"}
FLAGS = {"monitor", "no-log", "save"}
OPTION = re.compile(r"--([a-z-]+)(?:=(.*))?", re.S)
URL = re.compile(r"https?://\S+")


def parse_args(argv):
    o = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--help", "-h"):
            print(USAGE)
            sys.exit(0)
        m = OPTION.fullmatch(a)
        if not m or m.group(1) not in VALUED | FLAGS:
            raise UsageError(f"unknown argument {json.dumps(a)}")
        name = m.group(1)
        if name in o:
            raise UsageError(f"--{name} given twice")
        if name in FLAGS:
            if m.group(2) is not None:
                raise UsageError(f"--{name} takes no value")
            o[name] = True
            i += 1
            continue
        value = m.group(2)
        if value is None:
            i += 1
            if i >= len(argv):
                raise UsageError(f"--{name} needs a value")
            value = argv[i]
        o[name] = value
        i += 1

    def given(*names):
        return [n for n in names if n in o]

    if o.get("monitor"):
        other = given("certificate", "bundle", "hmac-secret", "key", "pair", "time", "fixing", "date", "proof", "no-log")
        if other:
            raise UsageError(f"--monitor takes --url, --head, --keys and --save, not --{other[0]}")
        if "url" not in o or "head" not in o:
            raise UsageError("--monitor needs --url and --head")
        if not URL.fullmatch(o["url"]):
            raise UsageError("--url must be an http(s) URL")
        return o
    if o.get("save"):
        raise UsageError("--save goes with --monitor")
    files = bool(given("certificate", "bundle", "keys"))
    remote = bool(given("url", "key", "pair", "time", "fixing", "date"))
    if files and remote:
        raise UsageError("give either --certificate/--bundle files or --url/--key/--pair/--time, not both")
    if remote and given("head", "proof"):
        raise UsageError("--head and --proof go with files: --url fetches the newest head and the proof itself")
    if files and ("certificate" not in o or "bundle" not in o):
        raise UsageError("--certificate and --bundle go together")
    if ("head" in o) != ("proof" in o):
        raise UsageError("--head and --proof go together")
    if o.get("no-log") and "head" in o:
        raise UsageError("--no-log skips the log: not with --head and --proof")
    fixing = "fixing" in o or "date" in o
    if remote and fixing and "time" in o:
        raise UsageError("--time names a certificate, --fixing and --date a fixing: not both")
    if remote and fixing and given("url", "key", "pair", "fixing", "date") != ["url", "key", "pair", "fixing", "date"]:
        raise UsageError("--url, --key, --pair, --fixing and --date go together")
    if remote and not fixing and given("url", "key", "pair", "time") != ["url", "key", "pair", "time"]:
        raise UsageError("--url, --key, --pair and --time go together")
    if not files and not remote:
        raise UsageError("")
    if remote:
        if not URL.fullmatch(o["url"]):
            raise UsageError("--url must be an http(s) URL")
        if not re.fullmatch(r"[A-Z0-9]{5,12}", o["pair"]):
            raise UsageError("--pair must be like BTCNGN")
        if fixing:
            if o["fixing"] not in ("local", "utc"):
                raise UsageError("--fixing must be local or utc")
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", o["date"]) or micros(f"{o['date']}T00:00:00+00:00") is None:
                raise UsageError("--date must be a day, e.g. 2026-11-24")
        else:
            t = micros(re.sub(r" 00:00$", "+00:00", o["time"]))
            if t is None:
                raise UsageError("--time must be ISO 8601, e.g. 2026-11-24T10:05:00+00:00")
            o["time"] = iso(t)[:19] + "+00:00"
    return o


def inflate(data):
    """Uncompressed bytes: a gzip stream (a saved response that kept its encoding) is inflated."""
    return gzip.decompress(data) if len(data) > 2 and data[0] == 0x1F and data[1] == 0x8B else data


def read_file(path, what):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise UsageError(f"cannot read the {what} {path}: {e.strerror or e}") from e


def parse_json(data, what):
    try:
        return json.loads(inflate(data).decode("utf-8"))
    except (ValueError, OSError) as e:
        raise InputError(f"the {what} is not JSON") from e


class InputError(Exception):
    pass


def get(url, key=None):
    headers = {"Accept": "application/json", "Accept-Encoding": "gzip"}
    if key:
        headers["X-API-Key"] = key
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=60) as res:
            return inflate(res.read())
    except urllib.error.HTTPError as e:
        body = e.read()
        message = body.decode("utf-8", "replace")[:300]
        try:
            message = json.loads(inflate(body).decode("utf-8")).get("message", message)
        except (ValueError, OSError, AttributeError):
            pass
        raise InputError(f"GET {url}: HTTP {e.code}: {message}") from e
    except (urllib.error.URLError, OSError) as e:
        raise InputError(f"GET {url}: {getattr(e, 'reason', e)}") from e


def load_keys(base=None, key=None, path=None):
    """The published keys, from the API (counted against `key`'s limit when given) or a file saved earlier."""
    listed = parse_json(get(f"{base}/v1/certificates/keys", key), "key list") if path is None else parse_json(read_file(path, "key list"), "key list")
    keys = obj(listed).get("keys")
    if not isinstance(keys, list):
        raise InputError('the key list has no "keys" array' + ("" if path is None else " (save GET /v1/certificates/keys as it is)"))
    return keys


def fetch_log(base, record):
    """The log's newest signed head and the record's inclusion proof at its size; a failure is reported by the log checks."""
    try:
        head = parse_json(get(f"{base}/v1/transparency/head"), "head")
    except InputError as e:
        return {"head_error": str(e), "proof_error": "no signed head to prove it against"}
    size = obj(head).get("tree_size")
    record_id = record_kind(record)[2]
    if not is_size(size) or size < 1:
        return {"head": head, "proof_error": f"no proof to ask for: the head's tree_size is {show(size)}"}
    if not isinstance(record_id, str):
        return {"head": head, "proof_error": "the record has no id to ask the log for"}
    try:
        url = f"{base}/v1/transparency/proof/inclusion?id={urllib.parse.quote(record_id, safe='')}&tree_size={int(size)}"
        return {"head": head, "proof": parse_json(get(url), "inclusion proof")}
    except InputError as e:
        return {"head": head, "proof_error": str(e)}


def load(o):
    if "url" in o:
        base = o["url"].rstrip("/")
        if "fixing" in o:
            day = obj(parse_json(get(f"{base}/v1/fixings/{o['pair']}/{o['date']}", o["key"]), "fixing list"))
            found = next((obj(f) for f in arr(day.get("fixings")) if obj(f).get("kind") == o["fixing"]), None)
            if found is None:
                raise InputError(f"GET {base}/v1/fixings/{o['pair']}/{o['date']} lists no {o['fixing']} fixing")
            if not isinstance(found.get("certificate"), dict):
                raise InputError(f'the {o["fixing"]} fixing of {o["pair"]} on {o["date"]} comes without its signed record ("certificate"): an Enterprise key sees it')
            certificate = found["certificate"]
            bundle_bytes = get(f"{base}/v1/fixings/{o['pair']}/{o['date']}/{o['fixing']}/bundle", o["key"])
        else:
            path = f"{base}/v1/certificates/{o['pair']}/{urllib.parse.quote(o['time'], safe='')}"
            certificate = parse_json(get(path, o["key"]), "certificate")
            bundle_bytes = get(f"{path}/bundle", o["key"])
        keys = load_keys(base, key=o["key"])
        log = {"skip": "--no-log given"} if o.get("no-log") else fetch_log(base, certificate)
        return certificate, bundle_bytes, keys, log
    certificate = parse_json(read_file(o["certificate"], "certificate"), "certificate")
    bundle_bytes = inflate(read_file(o["bundle"], "bundle"))
    keys = load_keys(path=o["keys"]) if "keys" in o else None
    if o.get("no-log"):
        log = {"skip": "--no-log given"}
    elif "head" not in o:
        log = {"skip": "no --head and --proof given (--url fetches them)"}
    else:
        log = {"head": parse_json(read_file(o["head"], "head"), "head"), "proof": parse_json(read_file(o["proof"], "inclusion proof"), "inclusion proof")}
    return certificate, bundle_bytes, keys, log


def finish(lines, failed):
    sys.stdout.write("\n".join(lines) + "\n")
    return 1 if failed else 0


def run_monitor(o):
    base = o["url"].rstrip("/")
    saved_bytes = read_file(o["head"], "saved head")
    try:
        saved = parse_json(saved_bytes, "saved head")
        current_bytes = get(f"{base}/v1/transparency/head")
        current = parse_json(current_bytes, "current head")
        keys = load_keys(base, path=o.get("keys"))
    except InputError as e:
        return finish([f"afrates transparency log monitor: {base}", f"FAIL input: {e}", "result: FAIL (input)"], True)
    first = obj(saved).get("tree_size")
    second = obj(current).get("tree_size")
    proof, proof_error = None, None
    if is_size(first) and is_size(second) and 0 < first < second:
        try:
            proof = parse_json(get(f"{base}/v1/transparency/proof/consistency?first={int(first)}&second={int(second)}"), "consistency proof")
        except InputError as e:
            proof_error = str(e)
    r = monitor(saved, current, keys, proof, proof_error)
    failed = list(dict.fromkeys(r.failed))
    out = [f"afrates transparency log monitor: {base}", *r.lines]
    out.append(f"result: FAIL ({', '.join(failed)})" if failed else f"result: ok, the log only grew ({text(first)} -> {text(second)} entries)")
    if o.get("save") and failed:
        out.append(f"not saved: {o['head']} keeps the saved head")
    elif o.get("save"):
        try:
            tmp = f"{o['head']}.tmp-{os.getpid()}"
            with open(tmp, "wb") as f:
                f.write(current_bytes)
            os.replace(tmp, o["head"])
            out.append(f"saved: {o['head']} now holds the current head ({text(second)} entries)")
        except OSError as e:
            out.append(f"FAIL save: cannot write {o['head']}: {e.strerror or e}")
            return finish(out, True)
    return finish(out, failed)


def main(argv):
    try:
        o = parse_args(argv)
        if o.get("monitor"):
            return run_monitor(o)
        try:
            certificate, bundle_bytes, keys, log = load(o)
        except InputError as e:
            print(f"FAIL input: {e}\nresult: FAIL (input)")
            return 1
    except UsageError as e:
        if str(e):
            print(f"afrates_verify: {e}", file=sys.stderr)
        print(USAGE, file=sys.stderr)
        return 2
    r = verify(certificate, bundle_bytes, keys, o.get("hmac-secret"), log)
    _, kind, record_id = record_kind(certificate)
    out = [f"afrates {kind} {record_id if isinstance(record_id, str) else '(no id)'}"]
    s = r.summary
    if s:
        out += [
            f"pair: {text(s['pair'])}",
            f"time: {text(s['time'])}",
            f"rate: {'none' if s['rate'] is None else s['rate']}",
            f"venues used: {', '.join(s['used']) or 'none'}",
            f"venues excluded: {', '.join(s['excluded']) or 'none'}",
        ]
    out += r.lines
    out.append(r.result())
    return finish(out, r.failed)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
