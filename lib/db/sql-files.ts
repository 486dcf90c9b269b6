// What the repeatable layer (lib/db/migrate.ts) knows of a file's text: whether it changed in
// substance (comments and layout are not substance), which aggregate an aggregate file makes, and
// where in which file a failing statement is.
import crypto from 'node:crypto';

/** One repeatable file: its name under sql/ (e.g. aggregates/20_candles_5m.sql) and its text. */
export interface SqlObjectFile {
  readonly name: string;
  readonly text: string;
  /** checksumOf(text), worked out once when the file is read */
  readonly checksum: string;
}

/**
 * substance()'s tokens, read from where the last one ended (sticky), in this order: a comment or a
 * run of whitespace (group 1: one space), a string literal or quoted name (kept whole, its spaces
 * too), a run of characters none of which can begin either, any other one character: one pass
 * over the text, every file being read at every start.
 */
const TOKEN = /(--[^\n]*|\/\*[\s\S]*?\*\/|\s+)|'(?:[^']|'')*'|"(?:[^"]|"")*"|[^-/\s'"]+|[\s\S]/y;

/**
 * The text without comments, with every run of whitespace outside string literals made one space:
 * two texts that differ only in comments or layout run the same statements.
 */
export function substance(text: string): string {
  const parts: string[] = [];
  let spaced = true; // a space before anything would be trimmed
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(text); m; m = TOKEN.exec(text)) {
    if (m[1] === undefined) {
      parts.push(m[0]);
      spaced = false;
    } else if (!spaced) {
      parts.push(' ');
      spaced = true;
    }
  }
  return parts.join('').trim();
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

/** What sql_objects records of a file: the checksum of its substance. */
export const checksumOf = (text: string): string => sha256(substance(text));

/** Whether a file is the one recorded: the same substance (or the very same text, as recorded before substance counted). */
export const unchanged = (file: SqlObjectFile, recorded: string | undefined): boolean =>
  recorded !== undefined && (recorded === file.checksum || recorded === sha256(file.text));

/** The digest of a set of files: what a process's release of the SQL objects is, for the version guard. */
export function buildOf(files: readonly SqlObjectFile[]): string {
  return sha256(files.map((f) => `${f.name}\n${f.checksum}\n`).join('')).slice(0, 16);
}

/** An aggregate file: the aggregate it makes (its first line says so) and the aggregates it reads. */
export interface AggregateFile extends SqlObjectFile {
  readonly aggregate: string;
  /** Its text with any DROP of its own aggregate blanked out (same length: lines stay where they were). */
  readonly create: string;
  readonly reads: readonly string[];
}

const HEADER = /^--\s*aggregate:\s*([a-z_][a-z0-9_]*)\s*$/;

/**
 * Reads each aggregate file's header (`-- aggregate: candles_5m` on its first line) and checks
 * the file against it: one CREATE MATERIALIZED VIEW, of that name, unqualified (it is built beside
 * the live one, in another schema), and no DROP but of that same aggregate (the migrator replaces
 * the old one itself). Throws naming the file otherwise.
 */
export function aggregateFiles(files: readonly SqlObjectFile[]): AggregateFile[] {
  const named = files.filter((f) => f.name.startsWith('aggregates/')).map((f) => {
    const header = HEADER.exec(f.text.split('\n', 1)[0]!.trim());
    if (!header) throw new Error(`${f.name}: the first line must name the aggregate the file makes, as "-- aggregate: <name>"`);
    const aggregate = header[1]!;
    const code = substance(f.text);
    const creates = [...code.matchAll(/CREATE MATERIALIZED VIEW (?:IF NOT EXISTS )?("?[\w.]+"?)/gi)].map((m) => m[1]!);
    if (creates.length !== 1 || creates[0] !== aggregate) {
      throw new Error(`${f.name}: its header names the aggregate ${aggregate}, but it creates ${creates.length === 0 ? 'none' : creates.join(', ')}: a file makes the one aggregate its header names, unqualified`);
    }
    const ownDrop = new RegExp(`DROP MATERIALIZED VIEW (?:IF EXISTS )?${aggregate}(?: CASCADE)?\\s*;`, 'gi');
    const create = f.text.replace(ownDrop, (m) => m.replace(/[^\n]/g, ' '));
    if (/\bDROP\b/i.test(substance(create))) throw new Error(`${f.name}: an aggregate file drops nothing (the migrator replaces ${aggregate} itself)`);
    return { ...f, aggregate, create, reads: [...code.matchAll(/\b(?:FROM|JOIN) ([a-z_][a-z0-9_]*)/gi)].map((m) => m[1]!) };
  });
  const seen = new Map<string, string>();
  for (const f of named) {
    const other = seen.get(f.aggregate);
    if (other) throw new Error(`${f.name}: ${other} makes ${f.aggregate} already`);
    seen.set(f.aggregate, f.name);
  }
  return named;
}

/** The aggregates to rebuild when `changed` ones changed: those, and every one reading one of them, in file order. */
export function withDependants(all: readonly AggregateFile[], changed: ReadonlySet<string>): AggregateFile[] {
  const out = new Set(changed);
  for (const f of all) if (f.reads.some((r) => out.has(r))) out.add(f.aggregate);
  return all.filter((f) => out.has(f.aggregate));
}

/**
 * A database error raised by a file's statements, named by the file and, when the database says
 * where (a character position in the statement text, which begins `offset` characters into the
 * file), the line.
 */
export function inFile(err: unknown, file: Pick<SqlObjectFile, 'name' | 'text'>, offset = 0): Error {
  const e = err as Error & { position?: string | number };
  const position = Number(e.position);
  const line = Number.isInteger(position) && position > 0 ? file.text.slice(0, offset + position - 1).split('\n').length : null;
  const where = line === null ? file.name : `${file.name}:${line}`;
  const wrapped = new Error(`${where}: ${e.message}`, { cause: err });
  Object.assign(wrapped, { file: file.name, line, code: (err as { code?: string }).code });
  return wrapped;
}
