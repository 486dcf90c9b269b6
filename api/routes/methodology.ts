// GET /v1/methodology: the methodology in force as data (no key needed): its version, effective
// date and every parameter with its value (lib/methodology/parameters.ts, the one definition; the
// settlement lag as this service runs it). The text is docs/methodology.md, served as /methodology.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { METHODOLOGY_EFFECTIVE, METHODOLOGY_VERSION, PARAMETERS, parametersInForce, type ParameterName } from '../../lib/methodology/parameters.js';
import type { Operation } from '../operation.js';
import { METHODOLOGY_RESPONSE, type MethodologyResponse } from '../schemas.js';
import { NO_QUERY, parseQuery } from '../validate.js';

export const operations: Operation[] = [
  {
    method: 'get',
    path: '/v1/methodology',
    summary: 'The methodology in force: version, effective date and every parameter with its value (the document is /methodology; no key needed)',
    tier: null,
    access: 'public',
    query: NO_QUERY,
    response: METHODOLOGY_RESPONSE,
  },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  const values = parametersInForce(deps.config.settleAfterSeconds);
  const body: MethodologyResponse = {
    version: METHODOLOGY_VERSION,
    effective_date: METHODOLOGY_EFFECTIVE,
    document: '/methodology',
    verifier: '/verify/afrates-verify.mjs',
    parameters: (Object.keys(PARAMETERS) as ParameterName[]).map((name) => ({
      name,
      value: values[name],
      unit: PARAMETERS[name].unit,
      description: PARAMETERS[name].description,
    })),
  };
  router.get('/v1/methodology', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = body;
  });
}
