// GET /v1/openapi.json: OpenAPI 3.1, built from the same JSON schemas ajv validates with, so the
// document cannot drift from what the API accepts and returns. Everything per operation is derived
// from its `operations` entry (api/operation.ts): operationId and tag from method and path, the
// error responses from its inputs, tier, rate limiting and declared `errors`; the reusable parts
// are in api/openapi-components.ts; the examples are real responses captured by
// `make openapi-examples` into api/openapi-examples.json. Conventions: docs/decisions.md.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import type { ErrorCode } from '../errors.js';
import {
  ERROR_CODES,
  ERROR_RESPONSES,
  ERROR_SCHEMA_REF,
  GATEWAY_SCHEMES,
  HEADERS,
  LICENSE,
  SECURITY_SCHEMES,
  TAGS,
  describeCodes,
  headersOf,
  responseKeyOf,
  responseRef,
} from '../openapi-components.js';
import EXAMPLES from '../openapi-examples.json' with { type: 'json' };
import { accessOf, type Operation } from '../operation.js';
import * as SCHEMAS from '../schemas.js';
import { TIER_RULES, tierLabel } from '../../lib/tiers.js';
import type { ObjectSchema } from '../validate.js';

export interface Example {
  readonly summary: string;
  readonly value: unknown;
}

/** api/openapi-examples.json: real requests and responses, by operationId and example name. */
export interface ExamplesFile {
  readonly about: string;
  /** operationId -> name -> a success response body */
  readonly responses: Readonly<Record<string, Readonly<Record<string, Example>>>>;
  /** operationId -> name -> a request body */
  readonly requests: Readonly<Record<string, Readonly<Record<string, Example>>>>;
  /** name -> an error response body (its `status` says which response it illustrates) */
  readonly errors: Readonly<Record<string, Example>>;
}

export interface OpenApiOptions {
  readonly version: string;
  /** PUBLIC_URL: the one server */
  readonly publicUrl: string;
  /** GATEWAY_SECRET is set: the marketplace gateway's headers authenticate too */
  readonly gateway: boolean;
  readonly examples?: ExamplesFile;
}

const upperFirst = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** getCertificatesPairTimestamp for GET /v1/certificates/:pair/:timestamp, unless the operation names its own. */
export function operationIdOf(op: Operation): string {
  if (op.operationId) return op.operationId;
  const words = op.path.replace(/^\/v\d+\//, '').split(/[^A-Za-z0-9]+/).filter(Boolean);
  return op.method + words.map(upperFirst).join('');
}

/** The resource: the path's first word after the version (rates, certificates, auth ...). */
export const tagOf = (op: Operation): string => op.path.split('/').filter(Boolean)[1] ?? 'other';

/** The error codes an operation can answer: implied by its shape, plus those its handler declares. */
export function errorCodesOf(op: Operation, limited: boolean, monthly: boolean): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (op.query || op.params || op.body) codes.add('validation_error');
  if (op.tier) codes.add('unauthorized');
  if (op.tier && TIER_RULES[op.tier].rank > 0) codes.add('tier_restricted');
  for (const c of op.errors ?? []) codes.add(c);
  if (limited) codes.add('rate_limit_exceeded');
  if (monthly) codes.add('monthly_quota_exceeded'); // counted before the route runs, whatever the tier the route needs
  codes.add('service_unavailable'); // the data not fresh yet, or the database (keys included) unreachable or too slow
  return [...codes];
}

/** The component name of a response schema: its export name in api/schemas.ts (LIVE_RESPONSE -> LiveResponse). */
function schemaName(schema: object, fallback: string): string {
  const found = Object.entries(SCHEMAS).find(([, value]) => value === schema)?.[0];
  return found ? found.toLowerCase().split('_').map(upperFirst).join('') : fallback;
}

function parameters(schema: ObjectSchema | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const required = new Set<string>((schema as { required?: readonly string[] }).required ?? []);
  return Object.entries(schema.properties).map(([name, s]) => {
    const { description, ...rest } = s as { description?: string };
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

const withExamples = (examples: Readonly<Record<string, Example>> | undefined) => (examples && Object.keys(examples).length ? { examples } : {});

export function buildOpenApi(all: readonly Operation[], opts: OpenApiOptions): object {
  const examples = opts.examples ?? (EXAMPLES as ExamplesFile);
  const security = opts.gateway ? [{ apiKey: [] }, { gatewaySecret: [], gatewayUser: [] }] : [{ apiKey: [] }];
  const paths: Record<string, Record<string, unknown>> = {};
  const schemas: Record<string, object> = { Error: { ...SCHEMAS.ERROR, description: 'Every error: a machine code, a message for people, the HTTP status.' } };
  const used = new Map<string, Set<ErrorCode>>(); // response key -> codes documented under it
  const tags: string[] = [];
  const ids = new Set<string>();

  for (const op of all) {
    const operationId = operationIdOf(op);
    if (ids.has(operationId)) throw new Error(`two operations would be ${operationId}: give one an explicit operationId`);
    ids.add(operationId);
    const tag = tagOf(op);
    if (!tags.includes(tag)) tags.push(tag);
    // what admits it (api/middleware/auth.ts): open ones count against nothing, public ones per minute only
    const access = accessOf(op);
    const limited = access.key !== null || access.limit !== 'open';
    const monthly = access.key !== null || access.limit === 'anonymous';

    const name = schemaName(op.response, `${upperFirst(operationId)}Response`);
    schemas[name] = op.response;
    const success = {
      description: op.status === 201 ? 'Created' : 'OK',
      headers: { ...headersOf({ limited }), ...op.successHeaders },
      content: {
        [op.contentType ?? 'application/json']: { schema: { $ref: `#/components/schemas/${name}` }, ...withExamples(examples.responses[operationId]) },
        ...Object.fromEntries(Object.entries(op.otherContent ?? {}).map(([type, schema]) => [type, { schema }])),
      },
    };

    const byResponse = new Map<string, ErrorCode[]>();
    for (const code of errorCodesOf(op, limited, monthly)) {
      const key = responseKeyOf(ERROR_CODES[code].status);
      byResponse.set(key, [...(byResponse.get(key) ?? []), code]);
      used.set(key, (used.get(key) ?? new Set()).add(code));
    }
    used.set('4XX', used.get('4XX') ?? new Set()); // every operation: a method its path does not take, the parser's answers
    const errors = Object.fromEntries(
      [...byResponse.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([key, codes]) => [key, { ...responseRef(ERROR_RESPONSES[key]!.name), description: describeCodes(codes) }]),
    );

    const keyText = op.tier ? `Needs an API key of the ${tierLabel(op.tier)} tier or higher.` : 'No API key needed.';
    const limitText = !limited
      ? 'Not rate limited.'
      : op.tier
        ? "Counts against the key's per-minute limit and monthly quota."
        : monthly
          ? "Rate limited by client address at the Free tier's rates (by the key's, when one is sent)."
          : 'Rate limited per minute by client address.';
    paths[op.path.replace(/:(\w+)/g, '{$1}')] = {
      ...paths[op.path.replace(/:(\w+)/g, '{$1}')],
      [op.method]: {
        operationId,
        tags: [tag],
        summary: op.summary,
        description: `${op.description ? `${op.description}\n\n` : ''}${keyText} ${limitText}`,
        security: op.tier ? security : [],
        parameters: [...parameters(op.params, 'path'), ...parameters(op.query, 'query')],
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: op.body, ...withExamples(examples.requests[operationId]) } } } } : {}),
        responses: { [String(op.status ?? 200)]: success, ...errors, '4XX': responseRef(ERROR_RESPONSES['4XX']!.name) },
      },
    };
  }

  // one response component per error status in use, with the real error bodies of that status as examples
  const responses: Record<string, object> = {};
  for (const [key, codes] of [...used.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const { name, extra, description } = ERROR_RESPONSES[key]!;
    const shown = Object.entries(examples.errors).filter(([, e]) => responseKeyOf((e.value as { status: number }).status) === key);
    responses[name] = {
      description: description ?? describeCodes([...codes]),
      headers: headersOf({ limited: true, extra }),
      content: { 'application/json': { schema: ERROR_SCHEMA_REF, ...withExamples(Object.fromEntries(shown)) } },
    };
  }

  // PUBLIC_URL; on a developer's machine (localhost) the server the document came from instead
  const publicUrl = opts.publicUrl.replace(/\/+$/, '');
  const local = /^https?:\/\/(localhost|127\.[\d.]+|\[::1\])(:\d+)?$/i.test(publicUrl);
  const codeTable = (Object.entries(ERROR_CODES) as [ErrorCode, { status: number; when: string }][]).map(([c, e]) => `| ${e.status} | \`${c}\` | ${e.when} |`).join('\n');
  return {
    openapi: '3.1.0',
    info: {
      title: 'afrates',
      version: opts.version,
      summary: 'Crypto-to-fiat rates for African currencies.',
      description: [
        'Live VWAP rates, OHLCV candles, end-of-day snapshots, spread, premium, composite indices, signed certificates, status and health for BTC, ETH, USDT, USDC, XRP and SOL in NGN, ZAR, KES, GHS and UGX, each checked against a synthetic cross-rate (CRYPTO/USDT x USD/FIAT).',
        'Send the API key in `X-API-Key`; POST /v1/auth/free-key issues a Free one. Rate-limited responses carry `X-RateLimit-*`, `RateLimit-Policy` and `RateLimit` (and `X-Quota-*` where a monthly quota applies); a 429 or 503 says when to retry in `Retry-After`. Bodies over 2 KB are gzip-compressed when `Accept-Encoding` allows. Responses built from simulated data say `X-Afrates-Data: simulated`.',
        `Errors are \`{error, message, status}\`:\n\n| status | error | when |\n|---|---|---|\n${codeTable}`,
        'This document: GET /v1/openapi.json (no key).',
      ].join('\n\n'),
      contact: { name: 'afrates', ...(local ? {} : { url: publicUrl }) },
      license: LICENSE,
    },
    servers: [local ? { url: '/', description: 'The server this document came from' } : { url: publicUrl, description: 'This deployment (PUBLIC_URL)' }],
    tags: tags.map((name) => ({ name, description: TAGS[name] ?? `Endpoints under /v1/${name}.` })),
    security,
    paths,
    components: {
      schemas,
      responses,
      headers: HEADERS,
      securitySchemes: { ...SECURITY_SCHEMES, ...(opts.gateway ? GATEWAY_SCHEMES : {}) },
    },
  };
}

export function mountOpenApi(router: AppRouter, deps: AppDeps, all: readonly Operation[]): void {
  const doc = buildOpenApi(all, { version: deps.config.version, publicUrl: deps.config.publicUrl, gateway: Boolean(deps.config.gatewaySecret) });
  router.get('/v1/openapi.json', async (ctx: AppContext) => {
    ctx.body = doc;
  });
}
