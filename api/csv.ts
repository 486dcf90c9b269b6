// CSV as RFC 4180 writes it: a header line, then one line a record, each ended by CRLF; a field
// holding a comma, a double quote or a line break is quoted, its quotes doubled. Values appear
// as the JSON API shows them: numbers as JSON writes them, true and false, text as is, and an
// empty field for null.

/** The media type of every CSV answer. */
export const CSV_TYPE = 'text/csv; charset=utf-8; header=present';

const NEEDS_QUOTES = /[",\r\n]/;

function field(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value); // a finite number: the same text as JSON.stringify; true, false
  return NEEDS_QUOTES.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV line of the values, CRLF included. */
export function csvLine(values: readonly unknown[]): string {
  let line = '';
  for (let i = 0; i < values.length; i++) line += (i ? ',' : '') + field(values[i]);
  return `${line}\r\n`;
}
