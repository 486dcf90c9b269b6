// The house's shape, read from the code's own imports: no import circle anywhere, imports pointing
// one way (lib/ below everything, pipeline/ and api/ beside each other and never importing one
// another, bin/ above them starting processes from each role's process.ts, sim/ and web/ programs
// of their own; a pipeline-only process loads nothing of api/), and no SQL
// in api/ outside api/queries/ (each resource's statements are there, or in the SQL functions they call);
// and the candle intervals listed once (lib/intervals.ts), each with its one aggregate file; and
// the tests and benchmarks starting the API and publishing pipelines through the service's own
// composition (lib/process.ts, api/process.ts, pipeline/process.ts, pipeline/records.ts), and
// loading nothing that imports Vitest (they run under tsx).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERVALS, INTERVAL_NAMES } from '../lib/intervals.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const FOLDERS = ['lib', 'pipeline', 'api', 'bin', 'sim', 'web/src', 'verify'];

function sources(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!fs.existsSync(full)) return [];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((e) => {
    const rel = path.posix.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'dist' || e.name === 'node_modules' ? [] : sources(rel);
    return /\.(ts|mts|mjs)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** The project files a file imports (static, dynamic and re-exports), by their path from the root. */
function importsOf(file: string, all: ReadonlySet<string>): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const specs = [...text.matchAll(/(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const out: string[] = [];
  for (const spec of specs) {
    if (!spec.startsWith('.')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const candidates = [target, target.replace(/\.js$/, '.ts'), target.replace(/\.mjs$/, '.mts'), `${target}.ts`, `${target}/index.ts`];
    const found = candidates.find((c) => all.has(c));
    if (found) out.push(found);
  }
  return out;
}

/**
 * What a file loads when it runs, among `all`: its imports but those of types alone (erased) and the
 * dynamic ones (bin/service.ts loads each role's part only when asked for).
 */
function loads(file: string, all: ReadonlySet<string>): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8')
    .replace(/^(import|export)\s+type\s[^;]*;/gm, '')
    .replace(/import\(\s*['"][^'"]+['"]\s*\)/g, '');
  const specs = [...text.matchAll(/from\s*['"](\.[^'"]+)['"]|^import\s+['"](\.[^'"]+)['"]/gm)].map((m) => m[1] ?? m[2]!);
  return specs.flatMap((spec) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    return [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`].find((c) => all.has(c)) ?? [];
  });
}

/** Every file `roots` load when they run, themselves included. */
function loadedBy(roots: readonly string[], all: ReadonlySet<string>): string[] {
  const seen = new Set<string>();
  const next = [...roots];
  while (next.length > 0) {
    const f = next.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    next.push(...loads(f, all));
  }
  return [...seen];
}

const files = FOLDERS.flatMap(sources);
const known = new Set(files);
const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
const folderOf = (f: string) => FOLDERS.find((d) => f === d || f.startsWith(`${d}/`))!;

describe('the structure of the code', () => {
  it('reads every source folder', () => {
    for (const d of ['lib', 'pipeline', 'api', 'bin', 'sim', 'web/src']) expect(files.some((f) => f.startsWith(`${d}/`)), d).toBe(true);
    expect([...graph.values()].flat().length).toBeGreaterThan(200); // the imports were read
  });

  it('has no import circle', () => {
    // Tarjan's strongly connected components: a component of more than one file is a circle
    let index = 0;
    const idx = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (v: string) => {
      idx.set(v, index);
      low.set(v, index++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v)!) {
        if (!idx.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
      }
      if (low.get(v) === idx.get(v)) {
        const component: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          component.push(w);
        } while (w !== v);
        if (component.length > 1 || graph.get(v)!.includes(v)) circles.push(component.sort());
      }
    };
    for (const f of files) if (!idx.has(f)) visit(f);
    expect(circles).toEqual([]);
  });

  it('has imports point one way: lib below all, pipeline and api apart, bin above, sim and web on their own', () => {
    const allowed: Record<string, readonly string[]> = {
      lib: ['lib'],
      pipeline: ['pipeline', 'lib'],
      api: ['api', 'lib'],
      sim: ['sim', 'lib'],
      bin: ['bin', 'pipeline', 'api', 'lib', 'sim'],
      'web/src': ['web/src'],
      verify: ['verify'],
    };
    const wrong = files.flatMap((f) => graph.get(f)!.filter((t) => !allowed[folderOf(f)]!.includes(folderOf(t))).map((t) => `${f} -> ${t}`));
    expect(wrong).toEqual([]);
  });

  it('has bin/ only start processes: of pipeline/ and api/ it imports their entry points alone', () => {
    // each role's composition lives with its folder (process.ts); the commands' own work beside it
    const entryPoints = ['pipeline/process.ts', 'api/process.ts', 'pipeline/backfill.ts', 'api/admin/server.ts'];
    const bin = sources('bin');
    expect(bin.length).toBeGreaterThan(5);
    const wrong = bin.flatMap((f) => graph.get(f)!.filter((t) => ['pipeline', 'api'].includes(folderOf(t)) && !entryPoints.includes(t)).map((t) => `${f} -> ${t}`));
    expect(wrong).toEqual([]);
  });

  it('starts a pipeline-only process with nothing of api/: neither the service nor the pipeline part loads it', () => {
    const pipelineOnly = loadedBy(['bin/serve.ts', 'pipeline/process.ts'], known);
    expect(pipelineOnly).toContain('pipeline/runner.ts');
    expect(pipelineOnly).toContain('lib/live/snapshot.ts'); // the alerts' live rates
    expect(pipelineOnly.filter((f) => f.startsWith('api/'))).toEqual([]);
    // and it can fail: an API-only process loads api/
    expect(loadedBy(['bin/serve.ts', 'api/process.ts'], known).filter((f) => f.startsWith('api/')).length).toBeGreaterThan(20);
  });

  it('has the tests and the benchmarks start the API and publishing pipelines through the service\'s composition', () => {
    // the harness (test/support/) starts them as bin/service.ts does, and bench/ starts them through it
    const everything = new Set([...files, ...sources('test'), ...sources('bench')]);
    expect(importsOf('test/support/api.ts', everything)).toEqual(expect.arrayContaining(['lib/process.ts', 'api/process.ts', 'pipeline/records.ts']));
    expect(importsOf('test/support/pipeline.ts', everything)).toContain('pipeline/process.ts');
    // what the composition wires, never wired again by hand: the API's dependencies and listener
    const byHand = /import\s*\{[^}]*\b(buildDeps|startApi)\b[^}]*\}\s*from\s*['"][./]+api\/server\.js['"]/;
    const harness = [...sources('test'), ...sources('bench')].filter((f) => f !== 'test/structure.test.ts');
    expect(harness.length).toBeGreaterThan(50);
    const wrong = harness.filter((f) => byHand.test(fs.readFileSync(path.join(ROOT, f), 'utf8')));
    expect(wrong).toEqual([]);
    // and it can fail
    expect(byHand.test("import { buildDeps, type RunningApi } from '../../api/server.js';")).toBe(true);
  });

  it('has the benchmarks load nothing that imports Vitest, which throws outside a test run', () => {
    const benches = sources('bench').filter((f) => f.endsWith('.bench.ts'));
    expect(benches.length).toBeGreaterThan(10);
    const loaded = loadedBy(benches, new Set([...files, ...sources('test'), ...sources('bench')]));
    expect(loaded).toContain('test/support/api.ts');
    const vitest = /^import\s+(?!type\s)[^'"]*from\s*['"]vitest['"]/m;
    expect(loaded.filter((f) => vitest.test(fs.readFileSync(path.join(ROOT, f), 'utf8')))).toEqual([]);
    // and it can fail: the tests import it
    expect(vitest.test(fs.readFileSync(path.join(ROOT, 'test/structure.test.ts'), 'utf8'))).toBe(true);
  });

  it('keeps every statement of the API in api/queries/', () => {
    const api = sources('api').filter((f) => !f.startsWith('api/queries/'));
    expect(api.length).toBeGreaterThan(40);
    // in the code, not its comments: a template tagged with a database handle (sql, tx, conn,
    // this.sql; typed or not), a statement run from text, or a statement's opening words
    const statement = /\b(sql|tx|conn)\s*(<[^>`]*>)?\s*`|\.unsafe\(|\b(SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|WITH)\s+[\w*(]/;
    const code = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    expect(statement.test('await this.sql<{ n: number }[]>`SELECT 1`')).toBe(true);
    const withSql = api.filter((f) => statement.test(code(f)));
    expect(withSql).toEqual([]);
  });

  it('lists the candle intervals once: no file but lib/intervals.ts spells them out', () => {
    // the run-once migrations before the one that checks rows against the list are history, never edited
    const LIST_CHECKED_FROM = '20261127170001000';
    const sqlFiles = (dir: string): string[] =>
      fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sqlFiles(path.posix.join(dir, e.name)) : e.name.endsWith('.sql') ? [path.posix.join(dir, e.name)] : []));
    const html = fs.readdirSync(path.join(ROOT, 'web')).filter((f) => f.endsWith('.html')).map((f) => `web/${f}`);
    const checked = [...files, ...sqlFiles('sql'), ...html].filter(
      (f) => f !== 'lib/intervals.ts' && !(f.startsWith('sql/migrations/') && path.basename(f) < LIST_CHECKED_FROM),
    );
    expect(checked.length).toBeGreaterThan(200);
    const token = (quoted: boolean) => new RegExp(quoted ? `(['"\`])(${INTERVAL_NAMES.join('|')})\\1` : `(?<![\\w-])(${INTERVAL_NAMES.join('|')})(?![\\w-])`, 'g');
    const distinct = (text: string, quoted: boolean) => new Set([...text.matchAll(token(quoted))].map((m) => m[2] ?? m[1])).size;
    const spelled = checked.flatMap((f) => {
      const lines = fs.readFileSync(path.join(ROOT, f), 'utf8').split('\n');
      // two names as literals on one line (an array, a CHECK, a CASE), or three anywhere within three lines
      return lines.flatMap((line, i) =>
        distinct(line, true) >= 2 || distinct(lines.slice(i, i + 3).join('\n'), false) >= 3 ? [`${f}:${i + 1}: ${line.trim().slice(0, 100)}`] : [],
      );
    });
    expect(spelled).toEqual([]);
    // and the test can fail: the list as the old CHECK wrote it, and as a comment runs it
    expect(distinct("CHECK (interval IN ('5m', '1h', '1d'))", true)).toBe(3);
    expect(distinct('-- at 5m, 1h and\n-- 1d', false)).toBe(3);
  });

  it('has one aggregate file per candle interval, bucketing at its width from what it is built from', () => {
    const dir = path.join(ROOT, 'sql', 'aggregates');
    for (const i of INTERVALS) {
      const named = fs.readdirSync(dir).filter((f) => f.replace(/^\d+_/, '') === `${i.aggregate}.sql`);
      expect(named, i.name).toHaveLength(1);
      const text = fs.readFileSync(path.join(dir, named[0]!), 'utf8');
      expect(text, i.name).toMatch(new RegExp(`CREATE MATERIALIZED VIEW ${i.aggregate}\\b`));
      expect(text, i.name).toContain(`time_bucket(INTERVAL '${i.width}'`);
      const source = i.builtFrom === 'trades' ? 'trades' : INTERVALS.find((f) => f.name === i.builtFrom)!.aggregate;
      expect(text, i.name).toMatch(new RegExp(`\\nFROM ${source}\\n`));
    }
  });
});
