// Account queries: a customer's daily request counts (api_usage_daily, written by the limiter).
import type { Sql } from '../../lib/db/connect.js';

/** The requests of each day from `since` (YYYY-MM-DD) on. */
export function dailyUsage(sql: Sql, customer: string, since: string) {
  return sql<{ day: string; requests: number }[]>`
    SELECT to_char(day, 'YYYY-MM-DD') AS day, requests::int AS requests FROM api_usage_daily
    WHERE customer = ${customer} AND day >= ${since}::date`;
}
