// GET /v1/openapi.json: OpenAPI 3.1, built from the same JSON schemas ajv validates with, so the
// document cannot drift from what the API accepts and returns.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import type { Operation } from '../operation.js';
import { ERROR } from '../schemas.js';
import { tierLabel } from '../tiers.js';
import type { ObjectSchema } from '../validate.js';

function parameters(schema: ObjectSchema | undefined, where: 'query' | 'path') {
  if (!schema) return [];
  const required = new Set<string>((schema as { required?: readonly string[] }).required ?? []);
  return Object.entries(schema.properties).map(([name, s]) => {
    const { description, ...rest } = s as { description?: string };
    return { name, in: where, required: where === 'path' || required.has(name), ...(description ? { description } : {}), schema: rest };
  });
}

export function buildOpenApi(all: readonly Operation[], version: string): object {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of all) {
    const path = op.path.replace(/:(\w+)/g, '{$1}');
    const errors: Record<string, unknown> = {
      '400': { description: 'validation_error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
    };
    if (op.tier) {
      errors['401'] = { description: 'unauthorized', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      errors['403'] = { description: 'tier_restricted (and for historical: interval_not_available, history_limit_exceeded)', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
      errors['429'] = { description: 'rate_limit_exceeded or monthly_quota_exceeded', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
    }
    paths[path] = {
      ...paths[path],
      [op.method]: {
        summary: op.summary,
        description: op.tier ? `Tier: ${tierLabel(op.tier)} and higher.` : 'No API key needed.',
        ...(op.tier ? { security: [{ apiKey: [] }] } : { security: [] }),
        parameters: [...parameters(op.params, 'path'), ...parameters(op.query, 'query')],
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: op.body } } } } : {}),
        responses: {
          [String(op.status ?? 200)]: { description: 'OK', content: { [op.contentType ?? 'application/json']: { schema: op.response } } },
          ...errors,
          '503': { description: 'service_unavailable', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'afrates', version, description: 'Crypto-to-fiat rates for African currencies.' },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      schemas: { Error: ERROR },
    },
    security: [{ apiKey: [] }],
    paths,
  };
}

export function mountOpenApi(router: AppRouter, deps: AppDeps, all: readonly Operation[]): void {
  const doc = buildOpenApi(all, deps.config.version);
  router.get('/v1/openapi.json', async (ctx: AppContext) => {
    ctx.body = doc;
  });
}
