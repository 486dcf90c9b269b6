// GET /v1/pairs: the authoritative list of public pairs with their venues and data availability.
import type { AppContext, AppDeps, AppRouter } from '../context.js';
import { date, timestamp } from '../../lib/format.js';
import { type Operation } from '../operation.js';
import { pairsWithHistory } from '../queries/rates.js';
import { PAIRS_RESPONSE, type PairsResponse } from '../schemas.js';
import { NO_QUERY, parseQuery } from '../validate.js';
import { isLive } from '../../lib/methodology/rules.js';
import { LiveJsonCache } from '../live/cache.js';

export const operations: Operation[] = [
  { method: 'get', path: '/v1/pairs', summary: 'Supported pairs and their data availability', tier: 'free', query: NO_QUERY, response: PAIRS_RESPONSE },
];

export function mount(router: AppRouter, deps: AppDeps): void {
  router.get('/v1/pairs', async (ctx: AppContext) => {
    parseQuery(NO_QUERY, ctx);
    const rows = await deps.read.run((sql) => pairsWithHistory(sql));
    // the moment live and markets answer for (whole seconds): one live rule, one clock
    const now = LiveJsonCache.moment(Date.now()).getTime();
    ctx.body = {
      pairs: rows.map((r) => {
        const info = deps.pairs.get(r.pair)!;
        const live = deps.snapshot.get(r.pair);
        const lastUpdate = live?.time ?? r.last_trade_at;
        return {
          pair: r.pair,
          base: info.base,
          quote: info.quote,
          exchanges: r.exchanges ?? [],
          availability: {
            live: live !== undefined && isLive(Math.floor((now - live.time.getTime()) / 1000)),
            historical_from: r.first_day ? date(r.first_day) : null,
            last_update: lastUpdate ? timestamp(lastUpdate) : null,
          },
        };
      }),
    } satisfies PairsResponse;
  });
}
