// A repeatable file's checksum is of its substance: an edit of comments and layout keeps it, an
// edit of what runs changes it (lib/db/sql-files.ts substance(), checksumOf()).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checksumOf, substance } from '../../../lib/db/sql-files.js';

const FILE = fs.readFileSync(path.resolve(import.meta.dirname, '../../../sql/aggregates/20_candles_5m.sql'), 'utf8');

describe('a SQL file’s substance', () => {
  it('drops comments and makes each run of whitespace one space, outside literals and quoted names', () => {
    expect(substance("  SELECT  1 -- one\n/* two\n lines */ ,\t'a  -- b' ,\"x  /* y */\"\n")).toBe("SELECT 1 , 'a  -- b' ,\"x  /* y */\"");
    expect(substance("SELECT 'it''s  here', a-b, a/b, x - -1, 'open")).toBe("SELECT 'it''s  here', a-b, a/b, x - -1, 'open");
    expect(substance('-- only a comment\n')).toBe('');
  });

  it('keeps a file’s checksum through an edit of comments and layout, and changes it with an edit of what runs', () => {
    const layout = FILE.replace('-- Source: trades', '-- Where it comes from: trades').replace('AS bucket,', 'AS bucket,   ').replace('FROM trades', 'FROM   trades /* raw */');
    expect(layout).not.toBe(FILE);
    expect(checksumOf(layout)).toBe(checksumOf(FILE));
    const real = FILE.replace('FROM trades', 'FROM trades_copy');
    expect(real).not.toBe(FILE);
    expect(checksumOf(real)).not.toBe(checksumOf(FILE));
    // whitespace inside a literal is substance
    expect(checksumOf("SELECT 'a b'")).not.toBe(checksumOf("SELECT 'a  b'"));
  });
});
