// Limit queries: each customer's counted requests, by calendar month (api_usage, which restores a
// month's count) and by day (api_usage_daily, which the account's usage reads).
import type { Sql } from '../../lib/db/connect.js';

/** Adds `requests` to a customer's day (YYYY-MM-DD). */
export async function addDailyUsage(sql: Sql, customer: string, day: string, requests: number): Promise<void> {
  await sql`
    INSERT INTO api_usage_daily (customer, day, requests) VALUES (${customer}, ${day}::date, ${requests})
    ON CONFLICT (customer, day) DO UPDATE SET requests = api_usage_daily.requests + excluded.requests`;
}

/** Adds `requests` to a customer's month (YYYY-MM). */
export async function addMonthlyUsage(sql: Sql, customer: string, month: string, requests: number): Promise<void> {
  await sql`
    INSERT INTO api_usage (customer, month, requests) VALUES (${customer}, ${`${month}-01`}::date, ${requests})
    ON CONFLICT (customer, month) DO UPDATE SET requests = api_usage.requests + excluded.requests`;
}

/** The requests stored for a customer's month (YYYY-MM): every process's count up to its last flush. */
export async function monthlyUsage(sql: Sql, customer: string, month: string): Promise<number> {
  const [row] = await sql<{ requests: string }[]>`
    SELECT requests::text FROM api_usage WHERE customer = ${customer} AND month = ${`${month}-01`}::date`;
  return Number(row?.requests ?? 0);
}
