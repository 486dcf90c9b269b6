// GET /v1/indices: MXNCI and ACLI now, with the change against 24 hours earlier
// (sql/functions/90_indices.sql).
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { numeric, timestamp } from '../../lib/format.js';
import { indexFigures } from '../../lib/methodology/figures.js';
import type { Operation } from '../operation.js';
import { indexAt } from '../queries/rates.js';
import { INDICES_RESPONSE, type IndicesResponse } from '../schemas.js';
import { parseQuery } from '../validate.js';

const INDICES = ['MXNCI', 'ACLI'] as const;
const query = {
  type: 'object',
  additionalProperties: false,
  properties: { index: { enum: INDICES, description: 'only this index' } },
} as const;

export const operations: Operation[] = [
  { method: 'get', path: '/v1/indices', summary: 'Composite indices MXNCI and ACLI', tier: 'builder', query, response: INDICES_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/indices', async (ctx: AppContext) => {
    const q = parseQuery(query, ctx);
    const now = new Date();
    const dayAgo = new Date(now.getTime() - 86_400_000);
    const indices: IndicesResponse['indices'] = {};
    for (const name of q.index ? [q.index] : INDICES) {
      const [current, before] = await deps.read.run(async (sql) => [await indexAt(sql, name, now), await indexAt(sql, name, dayAgo)]);
      indices[name] = {
        index_name: name,
        ...indexFigures(current?.value, before?.value),
        components: Object.fromEntries(
          Object.entries(current?.components ?? {}).map(([pair, c]) => [pair, { price: numeric(c.price), weight: numeric(c.weight) }]),
        ),
        timestamp: timestamp(now),
      };
    }
    ctx.body = { indices, timestamp: timestamp(now) } satisfies IndicesResponse;
  });
}
