// Candles as files: CSV text and Parquet bytes, made a chunk of rows at a time as the rows are
// read (api/queries/candles.ts candleChunks), each row shaped once (api/candles.ts), so the JSON,
// CSV and Parquet of a candle hold the same values.
import { candleColumns, candleTexts, candleValues, shapeCandle } from './candles.js';
import type { PairInfo } from './context.js';
import { csvLine } from './csv.js';
import { ParquetRowGroups } from './parquet.js';
import type { PageRow } from './queries/candles.js';

/** The header line, then the lines of each chunk as one piece. */
export async function* candleCsv(chunks: AsyncIterable<PageRow[]>, pair: Pick<PairInfo, 'pair' | 'quote'>, full: boolean): AsyncGenerator<string> {
  const columns = candleColumns(full);
  yield csvLine(columns.map((c) => c.name));
  for await (const rows of chunks) {
    let piece = '';
    for (const r of rows) piece += csvLine(candleValues(candleTexts(r, pair.pair, pair.quote, full), columns));
    yield piece;
  }
}

/** A Parquet file: its head and first row group, a row group a chunk, then the footer; `metadata` goes in the footer. */
export async function* candleParquet(chunks: AsyncIterable<PageRow[]>, pair: Pick<PairInfo, 'pair' | 'quote'>, full: boolean, metadata: Readonly<Record<string, string>>): AsyncGenerator<Buffer> {
  const columns = candleColumns(full);
  const file = new ParquetRowGroups(columns, metadata);
  for await (const rows of chunks) yield file.group(rows.map((r) => candleValues(shapeCandle(r, pair.pair, pair.quote, full), columns)));
  yield file.finish();
}
