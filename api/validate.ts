// Query and body validation: ajv compiles each route's JSON schema, and the same schema gives the
// route its TypeScript type (json-schema-to-ts) and its OpenAPI parameters (api/openapi.ts).
// Every failure is a 400 validation_error naming the parameter.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { validationError } from './errors.js';

// A query arrives as text, so its values are converted to the schema's types (numbers written
// plainly first: plainNumber); a body is JSON with types of its own, so a value of the wrong type
// (a label of 12345, a threshold of "5") is refused, never converted.
const OPTIONS = { allErrors: false, useDefaults: true, strict: true, verbose: true } as const;
const queryAjv = new Ajv({ ...OPTIONS, coerceTypes: true });
const jsonAjv = new Ajv({ ...OPTIONS, coerceTypes: false });
for (const a of [queryAjv, jsonAjv]) (addFormatsPlugin as unknown as (a: Ajv) => void)(a);

export type ObjectSchema = JSONSchema & { readonly type: 'object'; readonly properties: Record<string, JSONSchema> };

// Shared parameter shapes.
export const PAIR = { type: 'string', pattern: '^[A-Za-z]{6,8}$', maxLength: 8, description: 'pair identifier, e.g. BTCNGN' } as const;
/** The query of a route that takes none: any parameter is refused by name. */
export const NO_QUERY = { type: 'object', additionalProperties: false, properties: {} } as const;
// Years 2000-2099: beyond them a date is a typo, and a year past 9999 is not a timestamp anywhere.
export const DATE = { type: 'string', format: 'date', pattern: '^20\\d{2}-\\d{2}-\\d{2}$', maxLength: 10, description: 'YYYY-MM-DD (UTC), a year from 2000 to 2099' } as const;
export const BOOL = { type: 'boolean', default: false } as const;

const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');
const countOf = (e: ErrorObject, unit: string) => {
  const limit = (e.params as { limit: number }).limit;
  return `${limit} ${unit}${limit === 1 ? '' : 's'}`;
};

function describe(e: ErrorObject, where: string): string {
  const name = e.instancePath.replace(/^\//, '').replace(/\//g, '.') || (e.params as { missingProperty?: string }).missingProperty;
  const subject = name ? `${where} parameter '${name}'` : `the ${where}`;
  switch (e.keyword) {
    case 'required':
      return `${where} parameter '${(e.params as { missingProperty: string }).missingProperty}' is required`;
    case 'additionalProperties':
      return `unknown ${where} parameter '${(e.params as { additionalProperty: string }).additionalProperty}'`;
    case 'enum':
      return `${subject} must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'format':
      return `${subject} must be a valid ${e.params.format === 'date' ? 'date, YYYY-MM-DD' : (e.params as { format: string }).format}`;
    case 'type': {
      const types = String((e.params as { type: string | string[] }).type).split(',');
      return `${subject} must be ${types.map((t) => (t === 'boolean' ? 'true or false' : `${article(t)} ${t}`)).join(' or ')}`;
    }
    case 'pattern':
    case 'maxLength': {
      if ((e.parentSchema as { format?: string } | undefined)?.format === 'date') return `${subject} must be a date, YYYY-MM-DD, with a year from 2000 to 2099`;
      const described = (e.parentSchema as { description?: string } | undefined)?.description;
      if (e.keyword === 'maxLength') return `${subject} must be at most ${countOf(e, 'character')}${described ? ` (${described})` : ''}`;
      return `${subject} ${described ? `must be ${article(described)} ${described}` : e.message ?? 'is invalid'}`;
    }
    case 'minLength':
    case 'minItems':
    case 'minProperties': {
      const limit = (e.params as { limit: number }).limit;
      const unit = e.keyword === 'minLength' ? 'character' : e.keyword === 'minItems' ? 'item' : 'field';
      return `${subject} ${limit === 1 ? 'must not be empty' : `must have at least ${countOf(e, unit)}`}`;
    }
    case 'maxItems':
    case 'maxProperties':
      return `${subject} must have at most ${countOf(e, e.keyword === 'maxItems' ? 'item' : 'field')}`;
    default:
      return `${subject} ${e.message ?? 'is invalid'}`;
  }
}

const compiledFor = new Map<Ajv, WeakMap<object, ValidateFunction>>([
  [queryAjv, new WeakMap()],
  [jsonAjv, new WeakMap()],
]);

function compiled(schema: ObjectSchema, by: Ajv): ValidateFunction {
  const cache = compiledFor.get(by)!;
  let fn = cache.get(schema);
  if (!fn) {
    fn = by.compile(schema as object);
    cache.set(schema, fn);
  }
  return fn;
}

/**
 * Validates (and coerces) query parameters. A parameter given twice (?pair=A&pair=B) is refused
 * rather than guessed at. Answers are remembered by the query's text, per schema: clients poll the
 * same URL, and a live answer from memory would otherwise spend a tenth of its time re-reading its
 * query. What comes back is shared, so it is frozen.
 */
export function parseQuery<S extends ObjectSchema>(schema: S, ctx: { readonly querystring: string; readonly query: Record<string, unknown> }): Readonly<FromSchema<S>> {
  let seen = parsedQueries.get(schema);
  if (!seen) parsedQueries.set(schema, (seen = new Map()));
  let parsed = seen.get(ctx.querystring);
  if (parsed === undefined) {
    parsed = Object.freeze(readQuery(schema, ctx.query));
    if (seen.size >= 256) seen.clear(); // bounded: a client varying its query can't grow it
    seen.set(ctx.querystring, parsed);
  }
  return parsed as Readonly<FromSchema<S>>;
}
const parsedQueries = new WeakMap<object, Map<string, unknown>>();

function readQuery(schema: ObjectSchema, query: Record<string, unknown>): unknown {
  const copy: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(query)) {
    // an unknown parameter is named before anything else: ?pair[]=X is about 'pair[]', not a missing 'pair'
    if (!Object.hasOwn(schema.properties, k) && (schema as { additionalProperties?: unknown }).additionalProperties === false) throw validationError(`unknown query parameter '${k.slice(0, 40)}'`);
    if (Array.isArray(v)) throw validationError(`query parameter '${k}' is given more than once`);
    plainNumber(schema, k, v);
    copy[k] = v;
  }
  return check(schema, copy, 'query', queryAjv);
}

// Numbers in a query are written plainly: ajv's coercion would read '1e309' as Infinity, '0x10' as
// 16 and '' as 0, and a number past 2^53 would silently change.
const INTEGER_TEXT = /^-?\d{1,15}$/;
const NUMBER_TEXT = /^-?\d{1,15}(\.\d{1,15})?$/;

function plainNumber(schema: ObjectSchema, name: string, value: unknown): void {
  const type = (schema.properties[name] as { type?: string } | undefined)?.type;
  if (typeof value !== 'string' || (type !== 'integer' && type !== 'number')) return;
  if (!(type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(value)) {
    throw validationError(`query parameter '${name}' must be ${type === 'integer' ? 'a whole number' : 'a decimal number'}, like ${type === 'integer' ? '100' : '0.5'}`);
  }
}

export function parseBody<S extends ObjectSchema>(schema: S, body: unknown): FromSchema<S> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw validationError('the request body must be a JSON object');
  return check(schema, structuredClone(body) as Record<string, unknown>, 'body', jsonAjv) as FromSchema<S>;
}

/** Path parameters are strings; the schema bounds and shapes them. */
export function parseParams(schema: ObjectSchema, params: Record<string, string>): Record<string, string> {
  return check(schema, { ...params }, 'path', jsonAjv) as Record<string, string>;
}

function check(schema: ObjectSchema, data: Record<string, unknown>, where: string, by: Ajv): unknown {
  const validate = compiled(schema, by);
  if (!validate(data)) throw validationError(describe(validate.errors![0]!, where));
  return data;
}

export const EMAIL = { type: 'string', format: 'email', maxLength: 254 } as const;
/** The API's own rule for an email address (POST /v1/auth/free-key), for the key commands too. */
export const isEmail = (value: string): boolean => jsonAjv.validate(EMAIL, value) as boolean;

/**
 * A customer's name, in any script: no control characters (PostgreSQL refuses NUL),
 * no blank edges. The free-key form's customer_name and make key's NAME.
 */
export const CUSTOMER_NAME = {
  type: 'string',
  minLength: 1,
  maxLength: 200,
  pattern: '^[^\\p{Cc}\\s]([^\\p{Cc}]*[^\\p{Cc}\\s])?$',
  description: 'name without control characters or blank edges, e.g. Ọlá Foods',
} as const;
export const isCustomerName = (value: string): boolean => jsonAjv.validate(CUSTOMER_NAME, value) as boolean;
