// The one place that reads process.env. Everything else receives a Config.
// Each variable is documented in README.md under "Configuration".
import path from 'node:path';
import { VERSION } from './software.js';

export type Role = 'all' | 'api' | 'pipeline';
export type Market = 'real' | 'simulated';

export interface Config {
  /** A database server's URL; several hosts (postgres://u@h1:5433,h2:5433/db): the one accepting writes is used. */
  readonly databaseUrl: string | undefined;
  /**
   * Streaming replicas of databaseUrl: an API process sends its read-only queries to them (the
   * pipeline, writes, keys and usage stay on the primary). Empty: everything on the primary.
   */
  readonly databaseReadUrls: readonly string[];
  /** A replica whose replay lags more than this many seconds is not read from until it catches up. */
  readonly readMaxLagSeconds: number;
  readonly dataDir: string;
  readonly varDir: string;
  readonly host: string;
  readonly port: number;
  readonly adminPort: number;
  /** The Prometheus metrics listener's port (GET /metrics); null: no listener, nothing recorded. */
  readonly metricsPort: number | null;
  /** The address it binds: loopback unless a scraper on another host or container must reach it. */
  readonly metricsHost: string;
  /** When set, /metrics answers only `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  readonly redisUrl: string | undefined;
  readonly logLevel: string;
  readonly role: Role;
  readonly market: Market;
  readonly simUrl: string | undefined;
  /** make demo: 'real' plays Binance's USDT legs at real volume (hundreds of trades a minute each). */
  readonly simVolume: 'light' | 'real';
  readonly cycleSeconds: number;
  /**
   * Venues' trade streams (Binance, VALR; Luno with a key) beside the REST cycle: false collects by
   * REST alone. The REST cycle goes on either way, as the reconciler.
   */
  readonly streams: boolean;
  /**
   * The venues this process collects (VENUES=luno,valr); null: every venue. Pipelines on several
   * hosts may split the venues or each collect all (docs/operations.md, "Roles and several processes").
   */
  readonly venues: readonly string[] | null;
  /** A read-only Luno API key: Luno's streaming API asks for one; without it Luno stays on REST. */
  readonly lunoApiKey: { readonly id: string; readonly secret: string } | null;
  /**
   * The longest a statement of the API may run on a database server (0: no limit); the pipeline's
   * refreshes and storage jobs run without it. The embedded database cannot cancel a statement.
   */
  readonly statementTimeoutMs: number;
  /**
   * How long an idle keep-alive connection stays open. Longer than load balancers' idle timeouts
   * (AWS ALB, nginx upstreams: 60 s): a proxy that reuses a connection the API has just closed
   * answers its client 502. Node's default is 5 s.
   */
  readonly keepAliveSeconds: number;
  /** The longest the API works on a request before answering 503 (both databases). */
  readonly apiDeadlineMs: number;
  readonly fxCycleSeconds: number;
  /** A bucket is settled at the latest this long after it ends, even if a venue is behind. */
  readonly settleAfterSeconds: number;
  /** Raw trades older than this many days are dropped (candles are kept); null = keep them all. */
  readonly tradesRetentionDays: number | null;
  readonly gatewaySecret: string | undefined;
  readonly certSecret: string | undefined;
  readonly certEd25519Key: string | undefined;
  /**
   * How many reverse proxies in front of the API append to X-Forwarded-For (0: none, the socket's
   * address is the client). The client address is the one the first of them saw: entries a client
   * writes itself, further left, are never read.
   */
  readonly trustProxyHops: number;
  readonly publicUrl: string;
  readonly version: string;
  /** The git commit of the running code, when it is not a git checkout (the Docker image's build argument). */
  readonly gitCommit: string | undefined;
  /** Webhooks may go to private, loopback and link-local addresses, and over plain http (tests, local receivers). */
  readonly webhooksAllowPrivate: boolean;
  /** 64 hex characters: the key webhook signing secrets are sealed with; unset: one made once in var/keys/. */
  readonly webhookSecretKey: string | undefined;
}

export class ConfigError extends Error {
  constructor(readonly variable: string, message: string) {
    super(`${variable}: ${message}`);
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return n;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!values.includes(raw as T)) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
  return raw as T;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.join(' or ')}`);
  }
  return raw;
}

/**
 * One URL for each host of a postgres URL, in order: 'postgres://u:pw@h1:5433,h2/db?sslmode=require'
 * names two (libpq's form), each keeping the user, password, database and parameters.
 */
export function postgresHosts(url: string): string[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^@/?#]*@)?([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme, user = '', hosts, rest] = match;
  return hosts!.split(',').map((host) => `${scheme}${user}${host}${rest}`);
}

/** DATABASE_URL: a postgres URL of one host or several (the service writes to the one that accepts writes). */
function databaseUrlOf(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const hosts = postgresHosts(raw);
  hosts.forEach((host, i) => {
    const label = hosts.length > 1 ? `${name} (host ${i + 1})` : name;
    if (hosts.length > 1 && /^[a-z]+:\/\/([^@/?#]*@)?(:|$|[/?#])/i.test(host)) throw new ConfigError(label, 'is empty: separate the hosts by single commas');
    url({ [label]: host }, label, ['postgres:', 'postgresql:']);
  });
  return raw;
}

/** A comma-separated list of postgres URLs of replicas; only beside a server (the embedded database has none). */
function readUrls(env: Env, name: string, databaseUrl: string | undefined): string[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return [];
  const urls = raw.split(',').map((part) => part.trim());
  urls.forEach((part, i) => {
    const label = urls.length > 1 ? `${name} (URL ${i + 1})` : name;
    if (part === '') throw new ConfigError(label, 'is empty: separate the URLs by single commas');
    url({ [label]: part }, label, ['postgres:', 'postgresql:']);
  });
  if (!databaseUrl) throw new ConfigError(name, 'needs DATABASE_URL: replicas are streaming copies of a database server, and the embedded database has none');
  return urls;
}

function hexKey(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) throw new ConfigError(name, 'must be 64 hex characters (32 bytes), e.g. from `openssl rand -hex 32`');
  return raw;
}

function token(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^[\x21-\x7e]{16,200}$/.test(raw)) throw new ConfigError(name, 'must be 16 to 200 printable characters without spaces, e.g. from `openssl rand -hex 32`');
  return raw;
}

/** A comma-separated list of venue ids (which exist is checked where the venues are known: bin/service.ts). */
function venueList(env: Env, name: string): string[] | null {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return null;
  const ids = raw.split(',').map((part) => part.trim().toLowerCase());
  if (ids.some((id) => !/^[a-z0-9]+$/.test(id))) throw new ConfigError(name, 'must be venue ids separated by commas, e.g. luno,valr');
  return [...new Set(ids)];
}

/** LUNO_API_KEY_ID and LUNO_API_KEY_SECRET: both or neither. */
function lunoKey(env: Env): Config['lunoApiKey'] {
  const id = env.LUNO_API_KEY_ID || '';
  const secret = env.LUNO_API_KEY_SECRET || '';
  if (!id && !secret) return null;
  if (!id) throw new ConfigError('LUNO_API_KEY_ID', 'is needed with LUNO_API_KEY_SECRET (a read-only Luno API key has both)');
  if (!secret) throw new ConfigError('LUNO_API_KEY_SECRET', 'is needed with LUNO_API_KEY_ID (a read-only Luno API key has both)');
  if (!/^[\x21-\x7e]{1,200}$/.test(id) || !/^[\x21-\x7e]{1,200}$/.test(secret)) throw new ConfigError('LUNO_API_KEY_ID', 'and LUNO_API_KEY_SECRET must be printable characters without spaces');
  return { id, secret };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const varDir = path.resolve(env.AFRATES_VAR_DIR || 'var');
  const port = integer(env, 'PORT', 8080, 0, 65535);
  const databaseUrl = databaseUrlOf(env, 'DATABASE_URL');
  const config: Config = {
    databaseUrl,
    databaseReadUrls: readUrls(env, 'DATABASE_READ_URL', databaseUrl),
    readMaxLagSeconds: integer(env, 'DATABASE_READ_MAX_LAG_SECONDS', 10, 1, 3600),
    dataDir: path.resolve(env.AFRATES_DATA_DIR || path.join(varDir, 'db')),
    varDir,
    host: env.HOST || '0.0.0.0',
    port,
    // key commands find the admin endpoint through var/admin.json: any free port will do
    adminPort: integer(env, 'ADMIN_PORT', 0, 0, 65535),
    // off unless asked for: a fixed default port would collide between processes on one host
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : null,
    metricsHost: env.METRICS_HOST || '127.0.0.1',
    metricsToken: token(env, 'METRICS_TOKEN'),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    logLevel: oneOf(env, 'LOG_LEVEL', ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], 'info'),
    role: oneOf(env, 'ROLE', ['all', 'api', 'pipeline'] as const, 'all'),
    market: oneOf(env, 'MARKET', ['real', 'simulated'] as const, 'real'),
    simUrl: url(env, 'SIM_URL', ['http:']),
    simVolume: oneOf(env, 'SIM_VOLUME', ['light', 'real'] as const, 'light'),
    cycleSeconds: integer(env, 'CYCLE_SECONDS', 60, 1, 300),
    streams: oneOf(env, 'STREAMS', ['0', '1'] as const, '1') === '1',
    venues: venueList(env, 'VENUES'),
    lunoApiKey: lunoKey(env),
    statementTimeoutMs: integer(env, 'STATEMENT_TIMEOUT_MS', 10_000, 0, 600_000),
    apiDeadlineMs: integer(env, 'API_DEADLINE_MS', 15_000, 1, 600_000),
    keepAliveSeconds: integer(env, 'KEEP_ALIVE_SECONDS', 65, 1, 600),
    fxCycleSeconds: integer(env, 'FX_CYCLE_SECONDS', 3600, 1, 86400),
    settleAfterSeconds: integer(env, 'SETTLE_AFTER_SECONDS', 900, 0, 86400),
    tradesRetentionDays: integer(env, 'TRADES_RETENTION_DAYS', 0, 0, 36500) || null,
    gatewaySecret: env.GATEWAY_SECRET || undefined,
    certSecret: env.CERT_HMAC_SECRET || undefined,
    certEd25519Key: env.CERT_ED25519_PRIVATE_KEY || undefined,
    trustProxyHops: integer(env, 'TRUST_PROXY', 0, 0, 10),
    publicUrl: env.PUBLIC_URL || `http://localhost:${port}`,
    webhooksAllowPrivate: oneOf(env, 'WEBHOOKS_ALLOW_PRIVATE', ['0', '1'] as const, '0') === '1',
    webhookSecretKey: hexKey(env, 'WEBHOOK_SECRET_KEY'),
    version: VERSION,
    gitCommit: env.AFRATES_GIT_COMMIT || undefined,
    ...overrides,
  };
  return Object.freeze(config);
}
