// The published methodology (docs/methodology.md) and the code agree: every parameter the code
// defines is in the document's table with the same value, unit and meaning, and nothing else is;
// the version and effective date at the top and in the changelog are the code's.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../support/db.js';
import { METHODOLOGY_EFFECTIVE, METHODOLOGY_VERSION, PARAMETERS } from '../../../lib/methodology/parameters.js';

const DOC = fs.readFileSync(path.join(import.meta.dirname, '../../../docs/methodology.md'), 'utf8');

/** The rows of the markdown table under a heading, as cells (a `\|` inside a cell is a pipe). */
function table(heading: string): string[][] {
  const section = DOC.split(/^## /m).find((s) => s.startsWith(`${heading}\n`));
  if (!section) throw new Error(`no "## ${heading}" section`);
  return section
    .split('\n')
    .filter((l) => l.startsWith('|'))
    .slice(2) // header and separator
    .map((l) =>
      l
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim().replace(/\\\|/g, '|')),
    );
}

describe('docs/methodology.md', () => {
  it('states every parameter the code defines, with its value, unit and meaning, and no other', () => {
    const rows = table('Parameters');
    const documented = new Map(rows.map(([name, value, unit, meaning]) => [name!.replace(/`/g, ''), { value, unit, meaning }]));
    expect([...documented.keys()].sort()).toEqual(Object.keys(PARAMETERS).sort());
    for (const [name, p] of Object.entries(PARAMETERS)) {
      const row = documented.get(name)!;
      expect(row.value, name).toBe(String(p.value));
      expect(row.unit, name).toBe(p.unit);
      expect(row.meaning, name).toBe(p.description);
    }
  });

  it('names only parameters that exist wherever it cites one', () => {
    const cited = new Set([...DOC.matchAll(/`([a-z]+(?:_[a-z0-9]+)+)`/g)].map((m) => m[1]!));
    const known = new Set([...Object.keys(PARAMETERS), 'signed_payload', 'data_quality', 'divergence_pct', 'late_trades_24h', 'synthetic_only', 'single_source', 'fx_stale', 'no_trades', 'certificate_signature', 'ed25519_signature', 'methodology_version']);
    for (const name of cited) if (!name.includes('.')) expect(known.has(name) || /^(audit|inputs|bundle|data|pricing)/.test(name), name).toBe(true);
  });

  it('is the version in force, with its effective date, last in the changelog', () => {
    expect(DOC).toContain(`**Version ${METHODOLOGY_VERSION}, effective ${METHODOLOGY_EFFECTIVE}.**`);
    const changelog = table('Changelog');
    expect(changelog.at(-1)!.slice(0, 1)).toEqual([METHODOLOGY_VERSION]);
    expect(changelog.at(-1)![2]).toBe(METHODOLOGY_EFFECTIVE);
  });
});

describe('the count of public pairs', () => {
  it('is stated nowhere but by GET /v1/pairs itself, or as many as the database publishes', async () => {
    const db = await openTestDatabase();
    let published: number;
    try {
      [{ n: published }] = (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pairs WHERE visibility = 'public'`) as unknown as [{ n: number }];
    } finally {
      await db.close();
    }
    const root = path.join(import.meta.dirname, '../../..');
    const docs = ['README.md', 'docs/methodology.md', 'docs/operations.md', 'docs/decisions.md', 'web/index.html', 'web/status.html', 'web/dashboard.html'];
    for (const file of docs) {
      for (const m of fs.readFileSync(path.join(root, file), 'utf8').matchAll(/(\d+) (?:public )?pairs\b/g)) expect(Number(m[1]), `${file}: "${m[0]}"`).toBe(published);
    }
  });
});
