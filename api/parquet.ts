// Parquet files written one row group at a time (hyparquet-writer; the choice is in
// docs/decisions.md): each group's bytes are handed on as soon as it is encoded, and all that stays
// behind until the footer is each group's metadata. The same rows give the same bytes (no write
// time in the file), so a file's digest is the digest of its data.
import { ByteWriter, ParquetWriter, type SchemaElement } from 'hyparquet-writer';
import type { ColumnType } from './candles.js';

export const PARQUET_TYPE = 'application/vnd.apache.parquet';

export interface ParquetColumn {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/**
 * Physical and logical types: numbers are DOUBLE, the double the JSON API's number is; times are
 * UTC instants to the millisecond (TIMESTAMP, adjusted to UTC), read as such by pandas, DuckDB,
 * Spark and the rest.
 */
const ELEMENTS: Readonly<Record<ColumnType, Omit<SchemaElement, 'name'>>> = {
  timestamp: { type: 'INT64', converted_type: 'TIMESTAMP_MILLIS', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MILLIS' } },
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8', logical_type: { type: 'STRING' } },
  number: { type: 'DOUBLE' },
  integer: { type: 'INT32' },
  boolean: { type: 'BOOLEAN' },
};

export class ParquetRowGroups {
  private readonly out = new ByteWriter();
  private readonly file: ParquetWriter;

  /** `metadata`: the file's key-value metadata (what it holds). */
  constructor(
    private readonly columns: readonly ParquetColumn[],
    metadata: Readonly<Record<string, string>>,
  ) {
    const schema: SchemaElement[] = [
      { name: 'root', num_children: columns.length },
      ...columns.map((c) => ({ name: c.name, ...ELEMENTS[c.type], repetition_type: c.nullable ? ('OPTIONAL' as const) : ('REQUIRED' as const) })),
    ];
    const kvMetadata = Object.entries(metadata).map(([key, value]) => ({ key, value }));
    this.file = new ParquetWriter({ writer: this.out, schema, kvMetadata, createdBy: 'afrates' });
  }

  /** The file's bytes up to and including a row group of `rows` (each the columns' values in order; a timestamp as the API writes it). */
  group(rows: readonly (readonly unknown[])[]): Buffer {
    if (rows.length) {
      const columnData = this.columns.map((c, i) => {
        const data = rows.map((r) => r[i] ?? null);
        return { name: c.name, data: c.type === 'timestamp' ? data.map((t) => Date.parse(t as string)) : data };
      });
      void this.file.write({ columnData, rowGroupSize: rows.length });
    }
    return this.take();
  }

  /** The rest of the file: its metadata and footer. */
  finish(): Buffer {
    void this.file.finish();
    return this.take();
  }

  /** What was written since the last take; the buffer is then reused (offsets in the file keep counting). */
  private take(): Buffer {
    const bytes = Buffer.from(this.out.getBytes());
    this.out.index = 0;
    return bytes;
  }
}
