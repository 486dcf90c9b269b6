// Response shapes of the contract as JSON schemas: the OpenAPI document is built from them, the
// tests validate real responses against them, and the handlers' types are derived from them (end
// of file). Request schemas live beside their routes.
import type { FromSchema } from 'json-schema-to-ts';
import { INTERVAL_NAMES, RESTATEMENT_SUBJECTS } from '../lib/intervals.js';
import { EVENT_TYPES } from '../lib/webhooks/events.js';

export const TIMESTAMP = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?\\+00:00$' } as const;
export const DAY = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } as const;
const NUM = { type: 'number' } as const;
const NUM_OR_NULL = { type: ['number', 'null'] } as const;
const STR = { type: 'string' } as const;
/** The methodology version a published value was computed by (GET /v1/methodology). */
const METHODOLOGY_VERSION = { type: 'string', pattern: '^\\d+\\.\\d+\\.\\d+$', description: 'the methodology version the value was computed by (GET /v1/methodology)' } as const;
const INT = { type: 'integer' } as const;

export const ERROR = {
  type: 'object',
  required: ['error', 'message', 'status'],
  additionalProperties: false,
  properties: { error: STR, message: STR, status: INT },
} as const;

export const META = {
  type: 'object',
  required: ['request_id', 'timestamp', 'latency_ms'],
  properties: { request_id: STR, timestamp: TIMESTAMP, latency_ms: INT },
} as const;

const STATUS = { enum: ['verified', 'caution', 'unverified'] } as const;
const EXCLUSION_REASON = { enum: ['outlier', 'stale', 'no_trades'], description: 'outlier: deviates from the median of the other venues beyond outlier_limit; stale: behind (no recent data while others have it); no_trades: nothing in the window' } as const;
const QUALITY = { enum: ['high', 'medium', 'low', 'stale'] } as const;

export const LIVE_RATE = {
  type: 'object',
  required: ['rate', 'calculation', 'data_freshness_seconds', 'sources', 'status', 'data_quality'],
  additionalProperties: false,
  properties: {
    rate: NUM,
    calculation: { enum: ['vwap', 'synthetic'] },
    data_freshness_seconds: INT,
    sources: {
      type: 'array',
      items: { type: 'object', required: ['exchange', 'rate', 'time'], additionalProperties: false, properties: { exchange: STR, rate: NUM, time: TIMESTAMP } },
    },
    status: STATUS,
    data_quality: QUALITY,
    methodology_version: METHODOLOGY_VERSION,
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    synthetic_divergence_pct: NUM_OR_NULL,
    notes: STR,
    flags: { type: 'array', items: STR },
    pricing: {
      type: 'object',
      additionalProperties: false,
      properties: {
        exchange: {
          type: 'object',
          required: ['method', 'price', 'sources'],
          properties: {
            method: STR,
            price: NUM,
            sources: {
              type: 'array',
              description: "the venues that entered the rate: each one's newest 5-minute candle (VWAP, share of the volume, trade count and volume)",
              items: {
                type: 'object',
                required: ['exchange', 'price', 'weight', 'last_update', 'trades', 'volume'],
                properties: { exchange: STR, price: NUM, weight: NUM, last_update: TIMESTAMP, trades: INT, volume: { type: 'string', description: 'sum of the trade amounts, exact' } },
              },
            },
            excluded: {
              type: 'array',
              description: 'venues listed for the pair that did not enter the rate: outlier, stale (no trade within stale_seconds while others traded), no_trades (nothing in the live window)',
              items: { type: 'object', required: ['exchange', 'reason'], properties: { exchange: STR, reason: EXCLUSION_REASON } },
            },
          },
        },
        synthetic: {
          type: 'object',
          required: ['method', 'price', 'divergence', 'divergence_pct'],
          properties: { method: STR, price: NUM, divergence: NUM, divergence_pct: { type: 'string', pattern: '^-?\\d+\\.\\d{2}%$' } },
        },
      },
    },
    audit: { type: 'object', required: ['signature'], properties: { signature: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' } } },
  },
} as const;

export const LIVE_RESPONSE = {
  type: 'object',
  required: ['data', 'meta'],
  additionalProperties: false,
  properties: { data: { type: 'object', additionalProperties: LIVE_RATE }, meta: META },
} as const;

export const MARKETS_RESPONSE = {
  type: 'object',
  required: ['data', 'meta'],
  additionalProperties: false,
  properties: {
    data: { type: 'object', additionalProperties: LIVE_RATE },
    meta: { ...META, required: [...META.required, 'pair_count'], properties: { ...META.properties, pair_count: INT } },
  },
} as const;

export const CANDLE = {
  type: 'object',
  required: ['time', 'pair', 'open', 'high', 'low', 'close', 'vwap', 'total_volume', 'settled', 'verification', 'methodology_version'],
  additionalProperties: false,
  properties: {
    time: TIMESTAMP,
    pair: STR,
    open: NUM,
    high: NUM,
    low: NUM,
    close: NUM,
    vwap: NUM_OR_NULL,
    total_volume: NUM,
    settled: {
      type: 'boolean',
      description:
        'true once every venue has reported past the end of the candle (or the settlement lag has passed): it is certified, and changes afterwards only by late trades (GET /v1/status counts them). false: the candle may still change (the open bucket, or one just closed).',
    },
    verification: {
      type: 'object',
      required: ['status', 'data_quality'],
      additionalProperties: false,
      properties: {
        status: STATUS,
        data_quality: QUALITY,
        confidence: { type: 'number', minimum: 0, maximum: 1 },
        divergence_pct: NUM_OR_NULL,
        synthetic_price: NUM_OR_NULL,
        sources_count: INT,
      },
    },
    methodology_version: METHODOLOGY_VERSION,
  },
} as const;

export const HISTORICAL_RESPONSE = {
  type: 'object',
  required: ['pair', 'interval', 'start', 'end', 'data', 'meta'],
  additionalProperties: false,
  properties: {
    pair: STR,
    interval: { enum: INTERVAL_NAMES },
    start: DAY,
    end: DAY,
    data: { type: 'array', items: CANDLE },
    meta: {
      type: 'object',
      required: ['request_id', 'row_count', 'has_more', 'next_cursor', 'limit', 'limit_max'],
      additionalProperties: false,
      properties: {
        request_id: STR,
        row_count: INT,
        has_more: { type: 'boolean' },
        next_cursor: { anyOf: [TIMESTAMP, { type: 'null' }] },
        limit: INT,
        limit_max: INT,
      },
    },
  },
} as const;

export const EOD_RESPONSE = {
  type: 'object',
  required: ['date', 'pair', 'open', 'high', 'low', 'close', 'vwap', 'total_volume', 'methodology_version'],
  additionalProperties: false,
  properties: { date: DAY, pair: STR, open: NUM, high: NUM, low: NUM, close: NUM, vwap: NUM_OR_NULL, total_volume: NUM, methodology_version: METHODOLOGY_VERSION },
} as const;

export const SPREAD_RESPONSE = {
  type: 'object',
  required: ['pair', 'bid', 'ask', 'mid', 'spread', 'spread_bps', 'synthetic', 'premium', 'timestamp', 'sources', 'note'],
  additionalProperties: false,
  properties: {
    pair: STR,
    bid: NUM,
    ask: NUM,
    mid: NUM,
    spread: NUM,
    spread_bps: NUM,
    synthetic: { type: 'object', required: ['price', 'source'], properties: { price: NUM_OR_NULL, source: STR } },
    premium: { type: 'object', required: ['absolute', 'pct', 'interpretation'], properties: { absolute: NUM_OR_NULL, pct: NUM_OR_NULL, interpretation: STR } },
    timestamp: TIMESTAMP,
    sources: { type: 'array', items: { type: 'object', required: ['exchange', 'bid', 'ask'], properties: { exchange: STR, bid: NUM, ask: NUM } } },
    note: STR,
  },
} as const;

const PREMIUM_STATS = {
  avg_premium_pct: NUM_OR_NULL,
  max_premium_pct: NUM_OR_NULL,
  min_premium_pct: NUM_OR_NULL,
} as const;

export const PREMIUM_RESPONSE = {
  type: 'object',
  required: ['pair', 'current', 'interval', 'start', 'end', 'data', 'meta'],
  additionalProperties: false,
  properties: {
    pair: STR,
    current: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['local_price', 'synthetic_price', 'premium', 'premium_pct', 'status', 'timestamp'],
          properties: { local_price: NUM, synthetic_price: NUM, premium: NUM, premium_pct: NUM, status: STR, timestamp: TIMESTAMP },
        },
      ],
    },
    interval: { enum: INTERVAL_NAMES },
    start: DAY,
    end: DAY,
    data: {
      type: 'array',
      items: {
        type: 'object',
        required: ['timestamp', 'avg_premium_pct', 'max_premium_pct', 'min_premium_pct', 'avg_vwap', 'avg_synthetic', 'data_points'],
        properties: { timestamp: TIMESTAMP, avg_premium_pct: NUM, max_premium_pct: NUM, min_premium_pct: NUM, avg_vwap: NUM, avg_synthetic: NUM, data_points: INT },
      },
    },
    meta: { type: 'object', required: ['avg_premium_pct', 'max_premium_pct', 'min_premium_pct', 'data_points'], properties: { ...PREMIUM_STATS, data_points: INT, request_id: STR } },
  },
} as const;

const INDEX = {
  type: 'object',
  required: ['index_name', 'value', 'change_24h', 'change_pct_24h', 'components', 'timestamp'],
  additionalProperties: false,
  properties: {
    index_name: STR,
    value: NUM_OR_NULL,
    change_24h: NUM_OR_NULL,
    change_pct_24h: NUM_OR_NULL,
    components: { type: 'object', additionalProperties: { type: 'object', required: ['price', 'weight'], properties: { price: NUM, weight: NUM } } },
    timestamp: TIMESTAMP,
  },
} as const;

export const INDICES_RESPONSE = {
  type: 'object',
  required: ['indices', 'timestamp'],
  additionalProperties: false,
  properties: { indices: { type: 'object', additionalProperties: INDEX }, timestamp: TIMESTAMP },
} as const;

export const PAIRS_RESPONSE = {
  type: 'object',
  required: ['pairs'],
  additionalProperties: false,
  properties: {
    pairs: {
      type: 'array',
      items: {
        type: 'object',
        required: ['pair', 'base', 'quote', 'exchanges', 'availability'],
        additionalProperties: false,
        properties: {
          pair: STR,
          base: STR,
          quote: STR,
          exchanges: { type: 'array', items: STR },
          availability: {
            type: 'object',
            required: ['live', 'historical_from', 'last_update'],
            properties: { live: { type: 'boolean' }, historical_from: { anyOf: [DAY, { type: 'null' }] }, last_update: { anyOf: [TIMESTAMP, { type: 'null' }] } },
          },
        },
      },
    },
  },
} as const;

/** Beyond the contract, in health and status: how each venue's trades arrive. */
export const VENUE_TRANSPORTS = {
  type: 'array',
  description: "Each venue and how its trades arrive: 'stream' (its trade stream, with the REST cycle behind it as the reconciler) or 'rest' (the REST cycle alone); where it streams, the stream's state (open; reconnecting: a connection was lost, REST fills the gap; connecting) and how long ago its last trade message came.",
  items: {
    type: 'object',
    required: ['exchange', 'transport', 'stream'],
    additionalProperties: false,
    properties: {
      exchange: STR,
      transport: { enum: ['stream', 'rest'] },
      stream: {
        anyOf: [
          {
            type: 'object',
            required: ['state', 'last_message_age_seconds'],
            additionalProperties: false,
            properties: { state: { enum: ['open', 'reconnecting', 'connecting'] }, last_message_age_seconds: { type: ['integer', 'null'] } },
          },
          { type: 'null' },
        ],
      },
    },
  },
} as const;

/** Beyond the contract, in health and status: which processes collect and which one publishes. */
export const PIPELINE_PROCESSES = {
  type: 'object',
  description:
    "Which processes collect and which one publishes: every pipeline process seen in the last 30 seconds (host, pid, role, the venues it collects, whether it publishes, seconds since it was last seen) and the publisher (the holder of the publisher lease, since when; null for up to 15 s after a publisher stops, until another takes over). Any number of pipeline processes may run; one publishes at a time.",
  required: ['publisher', 'processes'],
  additionalProperties: false,
  properties: {
    publisher: {
      anyOf: [
        { type: 'object', required: ['host', 'pid', 'since'], additionalProperties: false, properties: { host: STR, pid: INT, since: TIMESTAMP } },
        { type: 'null' },
      ],
    },
    processes: {
      type: 'array',
      items: {
        type: 'object',
        required: ['host', 'pid', 'role', 'venues', 'publisher', 'last_seen_seconds'],
        additionalProperties: false,
        properties: { host: STR, pid: INT, role: { enum: ['all', 'pipeline'] }, venues: { type: 'array', items: STR }, publisher: { type: 'boolean' }, last_seen_seconds: INT },
      },
    },
  },
} as const;

export const STATUS_RESPONSE = {
  type: 'object',
  required: ['overall_status', 'pairs'],
  additionalProperties: false,
  properties: {
    overall_status: { enum: ['healthy', 'degraded', 'outage'] },
    venues: VENUE_TRANSPORTS,
    pipeline: PIPELINE_PROCESSES,
    pairs: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['last_update', 'age_seconds', 'sources_active', 'sources_failing'],
        properties: {
          last_update: { anyOf: [TIMESTAMP, { type: 'null' }] },
          age_seconds: { type: ['integer', 'null'] },
          sources_active: { type: 'array', items: STR },
          sources_quiet: { type: 'array', items: STR, description: 'listed and answering, but no trade in the pair for 15 minutes: not a fault, and no cause of degraded' },
          sources_failing: { type: 'array', items: STR },
          settled_through: { anyOf: [TIMESTAMP, { type: 'null' }], description: 'every 5-minute bucket ending at or before this is settled and certified' },
          late_trades_24h: { ...INT, description: 'trades stored in the last 24 h for buckets already settled (they corrected candles, never certificates)' },
        },
      },
    },
  },
} as const;

export const HEALTH_RESPONSE = {
  type: 'object',
  required: ['status', 'timestamp', 'version', 'uptime_seconds', 'services', 'data_freshness', 'metrics'],
  properties: {
    status: {
      enum: ['ok', 'degraded', 'starting'],
      description: 'starting (beyond the contract): the service is publishing what it already holds (make demo\'s history) and answers 503 until it serves all of it',
    },
    mode: { enum: ['real', 'simulated'] },
    timestamp: TIMESTAMP,
    version: STR,
    uptime_seconds: INT,
    services: {
      type: 'object',
      required: ['database', 'redis', 'data_collector', 'fx_updates'],
      properties: {
        database: { enum: ['ok', 'busy', 'error'], description: 'busy (beyond the contract): the database is there but did not answer the health reading within 2 s (a long refresh holds it); error: it failed or is not there' },
        redis: { enum: ['ok', 'error', 'disabled'] },
        data_collector: { enum: ['ok', 'error'] },
        fx_updates: { enum: ['ok', 'error'] },
      },
    },
    venues: VENUE_TRANSPORTS,
    pipeline: PIPELINE_PROCESSES,
    database_replicas: {
      type: 'array',
      description:
        'Beyond the contract, present when the API reads from replicas (DATABASE_READ_URL): each one, in order. ok: it serves reads; lagging: behind what this process has shown (the newest cycle) or more than the set seconds, reads go to the primary until it catches up; down: unreachable or no longer a standby, skipped. services.database is the primary.',
      items: {
        type: 'object',
        required: ['name', 'state', 'lag_seconds'],
        properties: {
          name: { type: 'string', description: 'replica1, replica2, ... in DATABASE_READ_URL order' },
          state: { enum: ['ok', 'lagging', 'down'] },
          lag_seconds: { type: ['number', 'null'], description: 'how far its replay is behind the primary (0: caught up); null while down' },
        },
      },
    },
    data_freshness: {
      type: 'object',
      required: ['crypto_prices_age_seconds', 'fx_rates_age_seconds'],
      properties: { crypto_prices_age_seconds: { type: ['integer', 'null'] }, fx_rates_age_seconds: { type: ['integer', 'null'] } },
    },
    metrics: {
      type: 'object',
      required: ['requests_24h', 'avg_latency_ms', 'error_rate'],
      properties: { requests_24h: INT, avg_latency_ms: NUM, error_rate: NUM },
    },
  },
} as const;

export const KEY_RESPONSE = {
  type: 'object',
  required: ['api_key', 'tier', 'rate_limit', 'monthly_quota', 'message'],
  additionalProperties: false,
  properties: { api_key: { type: 'string', pattern: '^afr_live_[0-9A-Za-z]{32}$' }, tier: STR, rate_limit: STR, monthly_quota: INT, message: STR },
} as const;

export const CERTIFICATE_LIST_RESPONSE = {
  type: 'object',
  required: ['pair', 'count', 'certificates'],
  additionalProperties: false,
  properties: {
    pair: STR,
    count: INT,
    certificates: {
      type: 'array',
      items: {
        type: 'object',
        required: ['timestamp', 'rate', 'certificate_url'],
        additionalProperties: false,
        properties: {
          timestamp: TIMESTAMP,
          rate: NUM,
          certificate_url: STR,
          restated: { type: 'boolean', description: "late trades moved the bucket's candle beyond the restatement threshold after it was certified (the certificate never changes)" },
          restatements_url: { ...STR, description: 'where the restatement is listed, when restated' },
        },
      },
    },
  },
} as const;

export const CERTIFICATE_RESPONSE = {
  type: 'object',
  required: ['certificate_id', 'schema_version', 'issuer', 'issued_at', 'data', 'verification', 'audit', 'customer', 'validity'],
  additionalProperties: false,
  properties: {
    certificate_id: { type: 'string', pattern: '^CERT-[A-Z]{6,8}-\\d{8}T\\d{6}Z$' },
    schema_version: STR,
    issuer: { type: 'object', required: ['name', 'url'], properties: { name: STR, url: STR } },
    issued_at: TIMESTAMP,
    data: {
      type: 'object',
      required: ['pair', 'base', 'quote', 'timestamp', 'rate', 'currency', 'calculation', 'sources', 'vwap_sources_count'],
      properties: {
        pair: STR, base: STR, quote: STR, timestamp: TIMESTAMP, rate: NUM, currency: STR, calculation: STR,
        sources: { type: 'array', items: STR }, vwap_sources_count: INT,
      },
    },
    verification: {
      type: 'object',
      required: ['status', 'confidence', 'divergence_pct', 'synthetic_price', 'data_quality'],
      properties: { status: STATUS, confidence: NUM, divergence_pct: NUM_OR_NULL, synthetic_price: NUM_OR_NULL, data_quality: QUALITY },
    },
    methodology_version: { ...STR, description: 'the methodology version the rate was computed by (GET /v1/methodology)' },
    inputs: {
      type: 'object',
      description: 'what entered the rate: per venue its trade count and volume; each listed venue left out, with the reason',
      required: ['venues', 'excluded'],
      properties: {
        venues: { type: 'array', items: { type: 'object', required: ['exchange', 'trades', 'volume'], properties: { exchange: STR, trades: INT, volume: { ...STR, description: 'sum of the trade amounts, exact' } } } },
        excluded: { type: 'array', items: { type: 'object', required: ['exchange', 'reason'], properties: { exchange: STR, reason: EXCLUSION_REASON } } },
      },
    },
    bundle: {
      type: 'object',
      description: "the replication bundle: every input of the rate, frozen at issue; sha256 of its canonical JSON (before gzip), covered by audit.certificate_signature",
      required: ['sha256', 'bytes', 'url'],
      properties: { sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' }, bytes: INT, url: STR },
    },
    audit: {
      type: 'object',
      required: ['collection_id', 'algorithm', 'signature', 'signed_payload', 'ed25519_signature'],
      properties: {
        collection_id: STR, algorithm: { const: 'HMAC-SHA256' }, signature: { type: 'string', pattern: '^[0-9a-f]{64}$' }, signed_payload: STR, ed25519_signature: STR, ed25519_key_id: STR,
        certificate_signature: { ...STR, description: 'Ed25519 (base64) over the canonical JSON of the certificate without `customer` and without this field' },
      },
    },
    customer: { type: 'object', required: ['tier', 'customer_name'], properties: { tier: STR, customer_name: { type: ['string', 'null'] } } },
    validity: { type: 'object', required: ['not_before', 'not_after'], properties: { not_before: TIMESTAMP, not_after: { type: 'null' } } },
  },
} as const;

const DECIMAL = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$' } as const;
const TIME_OR_NULL = { type: ['string', 'null'] } as const;

/** A replication bundle (pipeline/certify/bundle.ts): canonical JSON, keys sorted. */
export const BUNDLE_RESPONSE = {
  type: 'object',
  required: ['bundle_version', 'kind', 'id', 'pair', 'base', 'quote', 'market', 'window', 'methodology', 'software', 'issued_at', 'venues', 'trades', 'synthetic', 'result'],
  properties: {
    bundle_version: { const: 1 },
    kind: { enum: ['certificate', 'fixing'] },
    id: { ...STR, description: 'the certificate id (or fixing id) it belongs to' },
    pair: STR, base: STR, quote: STR,
    market: { enum: ['real', 'simulated'] },
    window: { type: 'object', required: ['start', 'end'], description: 'trades with start <= time < end', properties: { start: TIMESTAMP, end: TIMESTAMP } },
    methodology: { type: 'object', required: ['version', 'parameters'], properties: { version: STR, parameters: { type: 'object', additionalProperties: { type: ['number', 'string'] } } } },
    software: { type: 'object', required: ['name', 'version', 'commit'], properties: { name: STR, version: STR, commit: STR } },
    issued_at: TIMESTAMP,
    venues: {
      type: 'array',
      description: 'venues listed for the pair and how far each had collected when the rate was certified',
      items: { type: 'object', required: ['exchange', 'collected_through'], properties: { exchange: STR, collected_through: TIME_OR_NULL } },
    },
    trades: {
      type: 'array',
      description: "every trade of the pair in the window, exactly as stored, ordered by exchange, time, trade id",
      items: {
        type: 'object',
        required: ['exchange', 'trade_id', 'time', 'price', 'amount', 'side'],
        properties: { exchange: STR, trade_id: STR, time: STR, price: DECIMAL, amount: DECIMAL, side: { enum: ['buy', 'sell', null] } },
      },
    },
    synthetic: {
      type: 'object',
      required: ['usdt_leg', 'fx'],
      properties: {
        usdt_leg: {
          type: ['object', 'null'],
          description: 'the BASE/USDT pair per venue over the window (null for USDT and USDC, counted as 1 USD)',
          properties: { pair: STR, venues: { type: 'array', items: { type: 'object', required: ['exchange', 'pv', 'volume', 'trades'], properties: { exchange: STR, pv: DECIMAL, volume: DECIMAL, trades: INT } } } },
        },
        fx: {
          type: ['object', 'null'],
          description: 'USD/QUOTE in force at the start of the window\'s hour, and each source\'s newest observation behind it',
          properties: {
            currency: STR, hour: STR, units_per_usd: DECIMAL, source_updated_at: STR, fresh_sources: INT,
            observations: { type: 'array', items: { type: 'object', properties: { source: STR, units_per_usd: DECIMAL, time: STR, source_updated_at: STR } } },
          },
        },
      },
    },
    result: {
      type: 'object',
      description: 'what the methodology made of the inputs, as the certificate states it',
      required: ['rate', 'sources', 'excluded', 'synthetic_price', 'divergence_pct', 'status', 'confidence', 'data_quality'],
      properties: {
        rate: { type: ['string', 'null'] },
        sources: { type: 'array', items: { type: 'object', properties: { exchange: STR, trades: INT, volume: DECIMAL } } },
        excluded: { type: 'array', items: { type: 'object', properties: { exchange: STR, reason: EXCLUSION_REASON } } },
        synthetic_price: { type: ['string', 'null'] },
        divergence_pct: NUM_OR_NULL,
        status: STATUS,
        confidence: NUM_OR_NULL,
        data_quality: QUALITY,
      },
    },
  },
} as const;

export const METHODOLOGY_RESPONSE = {
  type: 'object',
  required: ['version', 'effective_date', 'document', 'verifier', 'parameters'],
  additionalProperties: false,
  properties: {
    version: METHODOLOGY_VERSION,
    effective_date: DAY,
    document: { ...STR, description: 'the methodology as a page' },
    verifier: { ...STR, description: 'the verifier (one file, Node 18+ standard library) that recomputes a certificate from its bundle' },
    parameters: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'value', 'unit', 'description'],
        additionalProperties: false,
        properties: { name: STR, value: { type: ['number', 'string'] }, unit: STR, description: STR },
      },
    },
  },
} as const;

/** A daily fixing as each tier sees it (GET /v1/fixings, GET /v1/fixings/{pair}/{date}). */
export const FIXING = {
  type: 'object',
  required: ['fixing_id', 'pair', 'date', 'kind', 'zone', 'time', 'local_time', 'window', 'rate', 'status', 'data_quality', 'methodology_version', 'published_at', 'restated'],
  additionalProperties: false,
  properties: {
    fixing_id: { type: 'string', pattern: '^FIX-[A-Z]{6,8}-\\d{8}T\\d{6}Z$' },
    pair: STR,
    date: { ...DAY, description: 'the day in the fixing zone' },
    kind: { enum: ['local', 'utc'], description: "local: 16:00 in the quote currency's home zone; utc: 00:00 UTC" },
    zone: { ...STR, description: 'IANA time zone of the fixing time (Africa/Lagos, ..., or UTC)' },
    time: TIMESTAMP,
    local_time: { ...STR, description: 'the fixing time on the zone\'s clock, with its offset' },
    window: { type: 'object', required: ['start', 'end'], additionalProperties: false, properties: { start: TIMESTAMP, end: TIMESTAMP } },
    rate: { ...NUM_OR_NULL, description: 'the VWAP of the window\'s trades; null when nothing traded (no synthetic number is ever a fixing)' },
    status: STATUS,
    data_quality: QUALITY,
    methodology_version: METHODOLOGY_VERSION,
    published_at: TIMESTAMP,
    restated: { type: 'boolean', description: 'late trades moved it beyond the restatement threshold: GET /v1/restatements has the record (the fixing itself never changes)' },
    notes: STR,
    confidence: NUM_OR_NULL,
    divergence_pct: NUM_OR_NULL,
    synthetic_price: NUM_OR_NULL,
    sources: { type: 'array', items: { type: 'object', required: ['exchange', 'trades', 'volume'], additionalProperties: false, properties: { exchange: STR, trades: INT, volume: STR } } },
    excluded: { type: 'array', items: { type: 'object', required: ['exchange', 'reason'], additionalProperties: false, properties: { exchange: STR, reason: EXCLUSION_REASON } } },
    certificate: { type: 'object', additionalProperties: true, description: "the fixing's signed record (Enterprise): as a certificate, with `fixing` and audit.certificate_signature" },
    bundle_url: STR,
  },
} as const;

export const FIXINGS_RESPONSE = {
  type: 'object',
  required: ['start', 'end', 'count', 'fixings'],
  additionalProperties: false,
  properties: { start: DAY, end: DAY, count: INT, fixings: { type: 'array', items: FIXING, description: 'by day, pair, local first' } },
} as const;

export const FIXING_DAY_RESPONSE = {
  type: 'object',
  required: ['pair', 'date', 'fixings'],
  additionalProperties: false,
  properties: { pair: STR, date: DAY, fixings: { type: 'array', items: FIXING } },
} as const;

export const RESTATEMENT = {
  type: 'object',
  required: ['id', 'pair', 'subject', 'time', 'original', 'previous', 'restated', 'change_pct', 'reason', 'restated_at'],
  additionalProperties: false,
  properties: {
    id: STR,
    pair: STR,
    subject: { enum: RESTATEMENT_SUBJECTS, description: "what was restated: a candle's VWAP (candle_<interval>; candle_1d is the end-of-day snapshot), or a fixing" },
    time: { ...TIMESTAMP, description: "the candle's start, or the fixing's time" },
    fixing_id: STR,
    original: { ...NUM, description: 'the value as first published' },
    previous: { ...NUM, description: 'the value published until this restatement' },
    restated: NUM,
    change_pct: { ...NUM, description: '(restated - previous) / previous x 100' },
    reason: {
      type: 'object',
      required: ['late_trades'],
      additionalProperties: false,
      properties: {
        late_trades: { type: 'array', description: 'trades that arrived after settlement, per venue', items: { type: 'object', required: ['exchange', 'trades'], additionalProperties: false, properties: { exchange: STR, trades: INT } } },
        aggregate_change: {
          type: 'object',
          description: "a change to the candles' formula restated this candle (docs/aggregates.md): the engineer's reason, the SQL files changed, and each published value that changed, before and after",
          required: ['reason', 'files', 'changed'],
          additionalProperties: false,
          properties: {
            reason: STR,
            files: { type: 'array', items: STR },
            changed: { type: 'object', additionalProperties: { type: 'object', required: ['previous', 'restated'], additionalProperties: false, properties: { previous: { type: ['string', 'null'] }, restated: { type: ['string', 'null'] } } } },
          },
        },
      },
    },
    restated_at: TIMESTAMP,
  },
} as const;

export const RESTATEMENTS_RESPONSE = {
  type: 'object',
  required: ['since', 'count', 'restatements'],
  additionalProperties: false,
  properties: { since: TIMESTAMP, count: INT, restatements: { type: 'array', items: RESTATEMENT } },
} as const;

export const CERTIFICATE_KEYS_RESPONSE = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: { type: 'object', required: ['key_id', 'algorithm', 'public_key_pem'], properties: { key_id: STR, algorithm: { const: 'Ed25519' }, public_key_pem: STR } },
    },
  },
} as const;

// ---- The transparency log (RFC 9162): hashes are SHA-256, lowercase hex ----

const HASH = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
const TREE_SIZE = { type: 'integer', minimum: 0 } as const;

export const TRANSPARENCY_HEAD_RESPONSE = {
  type: 'object',
  required: ['tree_size', 'root_hash', 'timestamp', 'signature', 'key_id', 'algorithm', 'signed_payload'],
  additionalProperties: false,
  properties: {
    tree_size: { ...TREE_SIZE, description: 'leaves in the tree this head signs' },
    root_hash: { ...HASH, description: "the tree's root, MTH (RFC 9162 section 2.1.1)" },
    timestamp: TIMESTAMP,
    signature: { type: 'string', description: 'Ed25519 signature of signed_payload, base64; the key is at GET /v1/certificates/keys' },
    key_id: STR,
    algorithm: { const: 'Ed25519' },
    signed_payload: { type: 'string', description: 'the exact text signed: canonical JSON (keys sorted, no spaces) of root_hash, timestamp and tree_size' },
  },
} as const;

export const TRANSPARENCY_HEADS_RESPONSE = {
  type: 'object',
  required: ['date', 'count', 'heads'],
  additionalProperties: false,
  properties: {
    date: DAY,
    count: INT,
    heads: {
      type: 'array',
      description: "oldest first: every head of the current UTC day; of an earlier day, only the day's last (kept for good)",
      items: {
        ...TRANSPARENCY_HEAD_RESPONSE,
        required: [...TRANSPARENCY_HEAD_RESPONSE.required, 'kept'],
        properties: { ...TRANSPARENCY_HEAD_RESPONSE.properties, kept: { type: 'boolean', description: "kept for good: the last head of a finished UTC day" } },
      },
    },
  },
} as const;

export const TRANSPARENCY_INCLUSION_RESPONSE = {
  type: 'object',
  required: ['id', 'leaf_index', 'tree_size', 'entry', 'leaf_hash', 'audit_path'],
  additionalProperties: false,
  properties: {
    id: STR,
    leaf_index: { type: 'integer', minimum: 0 },
    tree_size: { type: 'integer', minimum: 1 },
    entry: { type: 'string', description: 'the entry as logged: canonical JSON text, the bytes hashed' },
    leaf_hash: { ...HASH, description: 'SHA-256(0x00 || entry)' },
    audit_path: { type: 'array', items: HASH, description: 'PATH(leaf_index, D[tree_size]), leaf side first (RFC 9162 section 2.1.3)' },
  },
} as const;

export const TRANSPARENCY_CONSISTENCY_RESPONSE = {
  type: 'object',
  required: ['first', 'second', 'proof'],
  additionalProperties: false,
  properties: {
    first: { type: 'integer', minimum: 1 },
    second: { type: 'integer', minimum: 1 },
    proof: { type: 'array', items: HASH, description: 'PROOF(first, D[second]) (RFC 9162 section 2.1.4); empty when first = second' },
  },
} as const;

// The TypeScript types of the responses, derived from the schemas above: a handler that builds a
// body the schema would refuse does not compile.
export type LiveRate = FromSchema<typeof LIVE_RATE>;
export type LiveResponse = FromSchema<typeof LIVE_RESPONSE>;
export type MarketsResponse = FromSchema<typeof MARKETS_RESPONSE>;
export type Candle = FromSchema<typeof CANDLE>;
export type HistoricalResponse = FromSchema<typeof HISTORICAL_RESPONSE>;
export type EodResponse = FromSchema<typeof EOD_RESPONSE>;
export type SpreadResponse = FromSchema<typeof SPREAD_RESPONSE>;
export type PremiumResponse = FromSchema<typeof PREMIUM_RESPONSE>;
export type IndicesResponse = FromSchema<typeof INDICES_RESPONSE>;
export type PairsResponse = FromSchema<typeof PAIRS_RESPONSE>;
export type StatusResponse = FromSchema<typeof STATUS_RESPONSE>;
export type HealthResponse = FromSchema<typeof HEALTH_RESPONSE>;
export type KeyResponse = FromSchema<typeof KEY_RESPONSE>;
export type CertificateListResponse = FromSchema<typeof CERTIFICATE_LIST_RESPONSE>;
export type CertificateResponse = FromSchema<typeof CERTIFICATE_RESPONSE>;
export type CertificateKeysResponse = FromSchema<typeof CERTIFICATE_KEYS_RESPONSE>;
export type MethodologyResponse = FromSchema<typeof METHODOLOGY_RESPONSE>;
export type Fixing = FromSchema<typeof FIXING>;
export type FixingsResponse = FromSchema<typeof FIXINGS_RESPONSE>;
export type FixingDayResponse = FromSchema<typeof FIXING_DAY_RESPONSE>;
export type Restatement = FromSchema<typeof RESTATEMENT>;
export type RestatementsResponse = FromSchema<typeof RESTATEMENTS_RESPONSE>;
export type TransparencyHeadResponse = FromSchema<typeof TRANSPARENCY_HEAD_RESPONSE>;
export type TransparencyHeadsResponse = FromSchema<typeof TRANSPARENCY_HEADS_RESPONSE>;
export type TransparencyInclusionResponse = FromSchema<typeof TRANSPARENCY_INCLUSION_RESPONSE>;
export type TransparencyConsistencyResponse = FromSchema<typeof TRANSPARENCY_CONSISTENCY_RESPONSE>;

// ---- Web: the public board and status page, the account (dashboard), the live stream ----

const TIER = { enum: ['free', 'builder', 'professional', 'enterprise'] } as const;
const TIMESTAMP_OR_NULL = { anyOf: [TIMESTAMP, { type: 'null' }] } as const;
const API_KEY = { type: 'string', pattern: '^afr_live_[0-9A-Za-z]{32}$' } as const;

/** The free tier's live rate object (nothing more), or null for a pair without data. */
const FREE_LIVE_RATE = {
  ...LIVE_RATE,
  properties: {
    rate: LIVE_RATE.properties.rate,
    calculation: LIVE_RATE.properties.calculation,
    data_freshness_seconds: LIVE_RATE.properties.data_freshness_seconds,
    sources: LIVE_RATE.properties.sources,
    status: LIVE_RATE.properties.status,
    data_quality: LIVE_RATE.properties.data_quality,
    methodology_version: LIVE_RATE.properties.methodology_version,
  },
} as const;

export const BOARD_RESPONSE = {
  type: 'object',
  required: ['data', 'meta'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'object',
      description: "every public pair: the free tier's live rate object, null for a pair without data",
      additionalProperties: { anyOf: [FREE_LIVE_RATE, { type: 'null' }] },
    },
    meta: {
      type: 'object',
      required: ['timestamp', 'snapshot', 'pair_count', 'thresholds'],
      additionalProperties: false,
      properties: {
        timestamp: TIMESTAMP,
        snapshot: { ...INT, description: 'version of the live snapshot (the event id of the streams)' },
        pair_count: INT,
        thresholds: {
          type: 'object',
          description: 'status thresholds on |premium| in percent per quote currency (default: the others): verified at most `verified`, caution at most `caution`',
          additionalProperties: { type: 'object', required: ['verified', 'caution'], additionalProperties: false, properties: { verified: NUM, caution: NUM } },
        },
      },
    },
  },
} as const;

export const PUBLIC_STATUS_RESPONSE = {
  type: 'object',
  required: ['overall_status', 'timestamp', 'pairs', 'cycles', 'uptime', 'restatements', 'transparency'],
  additionalProperties: false,
  properties: {
    transparency: {
      type: ['object', 'null'],
      description: "the transparency log's newest signed head (GET /v1/transparency/head has its signature); null before the first",
      required: ['tree_size', 'root_hash', 'timestamp'],
      additionalProperties: false,
      properties: { tree_size: INT, root_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' }, timestamp: TIMESTAMP },
    },
    restatements: { type: 'array', description: 'restatements of the last 7 days, newest first (at most 20; GET /v1/restatements has them all)', items: RESTATEMENT },
    overall_status: { enum: ['healthy', 'degraded', 'outage'] },
    timestamp: TIMESTAMP,
    pairs: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['last_update', 'age_seconds', 'fresh', 'sources_active', 'sources_failing'],
        additionalProperties: false,
        properties: {
          last_update: TIMESTAMP_OR_NULL,
          age_seconds: { type: ['integer', 'null'] },
          fresh: { type: 'boolean', description: 'newest data at most 15 minutes old' },
          sources_active: { type: 'array', items: STR },
          sources_quiet: { type: 'array', items: STR, description: 'listed and answering, but no trade in the pair for 15 minutes: not a fault, and no cause of degraded' },
          sources_failing: { type: 'array', items: STR },
        },
      },
    },
    cycles: {
      type: 'array',
      description: "the collector's most recent trade cycles, newest first",
      items: {
        type: 'object',
        required: ['started_at', 'finished_at', 'duration_ms', 'ok', 'sources_ok', 'sources_failed', 'trades'],
        additionalProperties: false,
        properties: {
          started_at: TIMESTAMP,
          finished_at: TIMESTAMP,
          duration_ms: INT,
          ok: { type: 'boolean', description: 'at least one source delivered without error' },
          sources_ok: { type: 'array', items: STR },
          sources_failed: { type: 'array', items: STR },
          trades: INT,
        },
      },
    },
    uptime: {
      type: 'object',
      required: ['h24', 'd7'],
      additionalProperties: false,
      description: 'share of completed 5-minute slots in which a working trade cycle finished (since the first recorded cycle when younger); null before the first slot completes',
      properties: { h24: NUM_OR_NULL, d7: NUM_OR_NULL },
    },
  },
} as const;

const OWN_KEY = {
  type: 'object',
  required: ['id', 'prefix', 'label', 'created_at', 'last_used_at'],
  additionalProperties: false,
  properties: {
    id: INT,
    prefix: { ...STR, description: 'the first 13 characters of the key' },
    label: { type: ['string', 'null'] },
    created_at: TIMESTAMP,
    last_used_at: { ...TIMESTAMP_OR_NULL, description: 'written at most once a minute' },
    current: { type: 'boolean', description: 'the key that made this request' },
    revoked_at: TIMESTAMP_OR_NULL,
  },
} as const;

export const ACCOUNT_RESPONSE = {
  type: 'object',
  required: ['account', 'key', 'limits', 'usage'],
  additionalProperties: false,
  properties: {
    account: {
      type: 'object',
      required: ['id', 'tier', 'name', 'email', 'created_at'],
      additionalProperties: false,
      properties: { id: INT, tier: TIER, name: { type: ['string', 'null'] }, email: { type: ['string', 'null'] }, created_at: TIMESTAMP },
    },
    key: OWN_KEY,
    limits: {
      type: 'object',
      required: ['per_minute', 'per_month', 'intervals', 'history_days', 'max_page', 'streams_per_key', 'streams_per_account', 'concurrent_requests'],
      additionalProperties: false,
      properties: {
        per_minute: INT,
        per_month: { type: ['integer', 'null'], description: 'null: unlimited' },
        intervals: { type: 'array', items: { enum: INTERVAL_NAMES } },
        history_days: { type: ['integer', 'null'], description: 'null: full history' },
        max_page: INT,
        streams_per_key: INT,
        streams_per_account: { ...INT, description: 'open streams of all its keys together' },
        concurrent_requests: { ...INT, description: "requests in flight at once, all its keys together; past it, 429 with Retry-After" },
      },
    },
    usage: {
      type: 'object',
      required: ['minute', 'month', 'daily'],
      additionalProperties: false,
      properties: {
        minute: { type: 'object', required: ['used', 'limit', 'resets_at'], additionalProperties: false, properties: { used: INT, limit: INT, resets_at: TIMESTAMP } },
        month: {
          type: 'object',
          required: ['used', 'limit', 'resets_at'],
          additionalProperties: false,
          properties: { used: INT, limit: { type: ['integer', 'null'] }, resets_at: TIMESTAMP },
        },
        daily: {
          type: 'array',
          description: 'requests per UTC day, the last 30 days, oldest first (written every few seconds)',
          items: { type: 'object', required: ['date', 'requests'], additionalProperties: false, properties: { date: DAY, requests: INT } },
        },
      },
    },
  },
} as const;

export const ACCOUNT_KEYS_RESPONSE = {
  type: 'object',
  required: ['keys'],
  additionalProperties: false,
  properties: { keys: { type: 'array', items: OWN_KEY } },
} as const;

export const ACCOUNT_NEW_KEY_RESPONSE = {
  type: 'object',
  required: ['api_key', 'key', 'message'],
  additionalProperties: false,
  properties: {
    api_key: API_KEY,
    key: OWN_KEY,
    replaced: { ...OWN_KEY, description: 'rotation: the key this one replaces, revoked' },
    message: STR,
  },
} as const;

export const ACCOUNT_REVOKED_KEY_RESPONSE = {
  type: 'object',
  required: ['key'],
  additionalProperties: false,
  properties: { key: OWN_KEY },
} as const;

export const STREAM_EVENT = {
  type: 'object',
  description: 'the data of each `rates` event (SSE: `id: <snapshot version>`, `event: rates`, `data: <this JSON>`)',
  required: ['data', 'meta'],
  additionalProperties: false,
  properties: {
    data: { type: 'object', additionalProperties: LIVE_RATE },
    meta: { type: 'object', required: ['request_id', 'timestamp'], additionalProperties: false, properties: { request_id: STR, timestamp: TIMESTAMP } },
  },
} as const;

export type BoardResponse = FromSchema<typeof BOARD_RESPONSE>;
export type PublicStatusResponse = FromSchema<typeof PUBLIC_STATUS_RESPONSE>;
export type AccountResponse = FromSchema<typeof ACCOUNT_RESPONSE>;
export type AccountKeysResponse = FromSchema<typeof ACCOUNT_KEYS_RESPONSE>;
export type AccountNewKeyResponse = FromSchema<typeof ACCOUNT_NEW_KEY_RESPONSE>;
export type AccountRevokedKeyResponse = FromSchema<typeof ACCOUNT_REVOKED_KEY_RESPONSE>;
export type StreamEvent = FromSchema<typeof STREAM_EVENT>;

// ---- Webhooks (api/routes/webhooks.ts) ----

const WEBHOOK_EVENT_TYPE = { enum: EVENT_TYPES } as const;

const WEBHOOK_ENDPOINT = {
  type: 'object',
  required: ['id', 'url', 'description', 'events', 'pairs', 'divergence_pct', 'stale_seconds', 'heartbeat_seconds', 'secret_prefix', 'previous_secret_expires_at', 'state', 'disabled_reason', 'disabled_at', 'failing_since', 'created_at', 'updated_at'],
  additionalProperties: false,
  properties: {
    id: INT,
    url: STR,
    description: { type: ['string', 'null'] },
    events: { type: 'array', items: WEBHOOK_EVENT_TYPE },
    pairs: { anyOf: [{ type: 'array', items: STR }, { type: 'null' }], description: 'the pairs its pair events are limited to; null: every pair' },
    divergence_pct: { ...NUM, description: 'pair.divergence starts when |divergence from the synthetic price| exceeds this, in percent' },
    stale_seconds: { ...INT, description: 'pair.stale starts when the newest data behind a rate is older than this' },
    heartbeat_seconds: { ...INT, description: 'a heartbeat event this often (when subscribed)' },
    secret_prefix: { ...STR, description: 'the first characters of the signing secret (the secret itself is shown only at creation and rotation)' },
    previous_secret_expires_at: { ...TIMESTAMP_OR_NULL, description: 'after a rotation: deliveries carry a signature with the previous secret too until then' },
    state: { enum: ['enabled', 'disabled'] },
    disabled_reason: { type: ['string', 'null'], description: 'why it is disabled (every delivery failed for 24 hours, or disabled by the account)' },
    disabled_at: TIMESTAMP_OR_NULL,
    failing_since: { ...TIMESTAMP_OR_NULL, description: 'the first failed attempt since the last delivered one; failing for 24 hours disables the endpoint' },
    created_at: TIMESTAMP,
    updated_at: TIMESTAMP,
  },
} as const;

export const ACCOUNT_WEBHOOKS_RESPONSE = {
  type: 'object',
  required: ['endpoints', 'limits'],
  additionalProperties: false,
  properties: {
    endpoints: { type: 'array', items: WEBHOOK_ENDPOINT },
    limits: {
      type: 'object',
      required: ['endpoints', 'events'],
      additionalProperties: false,
      description: "what the account's tier allows",
      properties: { endpoints: INT, events: { type: 'array', items: WEBHOOK_EVENT_TYPE } },
    },
  },
} as const;

export const ACCOUNT_WEBHOOK_RESPONSE = {
  type: 'object',
  required: ['endpoint'],
  additionalProperties: false,
  properties: { endpoint: WEBHOOK_ENDPOINT },
} as const;

export const ACCOUNT_WEBHOOK_SECRET_RESPONSE = {
  type: 'object',
  required: ['endpoint', 'secret', 'message'],
  additionalProperties: false,
  properties: {
    endpoint: WEBHOOK_ENDPOINT,
    secret: { type: 'string', pattern: '^whsec_[0-9A-Za-z_-]{32}$', description: 'the signing secret, shown this once' },
    message: STR,
  },
} as const;

export const ACCOUNT_WEBHOOK_TEST_RESPONSE = {
  type: 'object',
  required: ['event', 'message'],
  additionalProperties: false,
  properties: {
    event: { type: 'object', required: ['id', 'type', 'created_at'], additionalProperties: false, properties: { id: STR, type: { const: 'test' }, created_at: TIMESTAMP } },
    message: STR,
  },
} as const;

export const ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE = {
  type: 'object',
  required: ['deliveries'],
  additionalProperties: false,
  properties: {
    deliveries: {
      type: 'array',
      description: 'the newest first',
      items: {
        type: 'object',
        required: ['id', 'event', 'state', 'attempts', 'next_attempt_at', 'created_at', 'finished_at', 'attempt_log'],
        additionalProperties: false,
        properties: {
          id: INT,
          event: {
            type: 'object',
            required: ['id', 'type', 'pair', 'created_at'],
            additionalProperties: false,
            properties: { id: STR, type: STR, pair: { type: ['string', 'null'] }, created_at: TIMESTAMP },
          },
          state: { enum: ['pending', 'delivered', 'failed'], description: 'pending: being tried (retries with backoff for 24 hours after the event); failed: given up' },
          attempts: INT,
          next_attempt_at: TIMESTAMP_OR_NULL,
          created_at: TIMESTAMP,
          finished_at: TIMESTAMP_OR_NULL,
          attempt_log: {
            type: 'array',
            description: 'the newest attempts first (at most 10)',
            items: {
              type: 'object',
              required: ['attempt', 'at', 'duration_ms', 'status', 'error'],
              additionalProperties: false,
              properties: {
                attempt: INT,
                at: TIMESTAMP,
                duration_ms: INT,
                status: { type: ['integer', 'null'], description: 'the HTTP status answered; null: no answer' },
                error: { type: ['string', 'null'], description: 'why it failed; null: delivered' },
              },
            },
          },
        },
      },
    },
  },
} as const;

export type AccountWebhooksResponse = FromSchema<typeof ACCOUNT_WEBHOOKS_RESPONSE>;
export type AccountWebhookResponse = FromSchema<typeof ACCOUNT_WEBHOOK_RESPONSE>;
export type AccountWebhookSecretResponse = FromSchema<typeof ACCOUNT_WEBHOOK_SECRET_RESPONSE>;
export type AccountWebhookTestResponse = FromSchema<typeof ACCOUNT_WEBHOOK_TEST_RESPONSE>;
export type AccountWebhookDeliveriesResponse = FromSchema<typeof ACCOUNT_WEBHOOK_DELIVERIES_RESPONSE>;
export type WebhookEndpoint = AccountWebhookResponse['endpoint'];
