// Month files kept in the database (month_files): a complete month's export file with the digest of
// the candle rows it was made from, and which complete months have none yet.
import type { Sql } from '../../lib/db/connect.js';
import type { IntervalName } from '../../lib/intervals.js';

export interface MonthFileKey {
  readonly pair: string;
  readonly interval: IntervalName;
  /** YYYY-MM */
  readonly month: string;
  readonly format: 'csv' | 'parquet';
}

export interface StoredMonthFile {
  readonly bytes: Buffer;
  /** candlesDigest of the rows the file was made from */
  readonly rowsDigest: string;
  /** what made it (monthFileMaker) */
  readonly maker: string;
}

const monthDate = (month: string) => `${month}-01`;

export async function storedMonthFile(sql: Sql, k: MonthFileKey): Promise<StoredMonthFile | null> {
  const [row] = await sql<{ bytes: Buffer; rows_digest: string; maker: string }[]>`
    SELECT bytes, rows_digest, maker FROM month_files
    WHERE pair = ${k.pair} AND interval = ${k.interval} AND month = ${monthDate(k.month)} AND format = ${k.format}`;
  return row ? { bytes: row.bytes, rowsDigest: row.rows_digest, maker: row.maker } : null;
}

/** Keeps a file, in place of the one kept before for its month (made from older rows). */
export async function storeMonthFile(sql: Sql, k: MonthFileKey, file: StoredMonthFile): Promise<void> {
  await sql`
    INSERT INTO month_files (pair, interval, month, format, rows_digest, maker, bytes)
    VALUES (${k.pair}, ${k.interval}, ${monthDate(k.month)}, ${k.format}, ${file.rowsDigest}, ${file.maker}, ${file.bytes})
    ON CONFLICT (pair, interval, month, format)
    DO UPDATE SET rows_digest = EXCLUDED.rows_digest, maker = EXCLUDED.maker, bytes = EXCLUDED.bytes, made_at = now()`;
}

/**
 * Complete months with no file kept by `maker` yet, newest first, at most `limit`: for each public
 * pair, the months from its first candle through the last one its settlement has passed wholly, in
 * every interval (candle_intervals(): lib/intervals.ts) and format.
 */
export async function monthFilesDue(sql: Sql, maker: string, limit: number): Promise<(MonthFileKey & { quote: string })[]> {
  return sql<(MonthFileKey & { quote: string })[]>`
    WITH spans AS (
      SELECT p.pair, p.quote,
             (SELECT date_trunc('month', min(c.bucket) AT TIME ZONE 'UTC') FROM candles_1d c WHERE c.pair = p.pair) AS first_month,
             date_trunc('month', s.settled_through AT TIME ZONE 'UTC') - INTERVAL '1 month' AS last_month
      FROM public_pairs p JOIN pair_settlement s ON s.pair = p.pair
    )
    SELECT sp.pair, sp.quote, i.interval, to_char(m.month, 'YYYY-MM') AS month, f.format
    FROM spans sp
    CROSS JOIN LATERAL generate_series(sp.first_month, sp.last_month, INTERVAL '1 month') AS m(month)
    CROSS JOIN (SELECT name AS interval FROM candle_intervals()) AS i
    CROSS JOIN (VALUES ('csv'), ('parquet')) AS f(format)
    WHERE NOT EXISTS (
      SELECT 1 FROM month_files mf
      WHERE mf.pair = sp.pair AND mf.interval = i.interval AND mf.month = m.month::date AND mf.format = f.format AND mf.maker = ${maker})
    ORDER BY m.month DESC, sp.pair, i.interval, f.format
    LIMIT ${limit}`;
}
