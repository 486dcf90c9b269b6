// Builds the web front end into web/dist: four pages (/, /dashboard, /docs, /status), their
// scripts and styles bundled with content-hashed names under assets/, and a gzip and brotli copy
// of every text file beside it, so the API (api/web.ts) never compresses a page per request.
// The API reference (Scalar) is its published browser bundle (web/src/scalar.ts), put under
// assets/ and loaded by /docs only. /methodology is docs/methodology.md rendered into its page at
// build time.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Marked } from 'marked';
import { defineConfig, type Plugin } from 'vite';
import { SCALAR, SCALAR_ENTRY } from './src/scalar.js';

const root = path.dirname(new URL(import.meta.url).pathname);
const outDir = path.join(root, 'dist');

/** Writes name.gz and name.br beside every text file of 1 KB or more. */
function precompress(): Plugin {
  return {
    name: 'afrates-precompress',
    apply: 'build',
    closeBundle() {
      const walk = (dir: string): string[] =>
        fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
      for (const file of walk(outDir)) {
        if (!/\.(html|js|css|svg|json|txt)$/.test(file)) continue;
        const bytes = fs.readFileSync(file);
        if (bytes.length < 1024) continue;
        fs.writeFileSync(`${file}.gz`, zlib.gzipSync(bytes, { level: 9 }));
        fs.writeFileSync(`${file}.br`, zlib.brotliCompressSync(bytes, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

/**
 * Scalar's browser bundle (package/dist/browser: an ES module and the chunks it loads, without
 * source maps), from the package's tarball: fetched once with `npm pack` into
 * node_modules/.cache, refused unless its digest is SCALAR.integrity, and emitted under
 * assets/scalar-<version>/ (served as immutable assets, compressed with the rest).
 */
function scalarBundle(): Plugin {
  const cache = path.join(root, '..', 'node_modules', '.cache', 'afrates-scalar');
  const tarball = path.join(cache, `scalar-api-reference-${SCALAR.version}.tgz`);
  const digest = (file: string) => `sha512-${crypto.createHash('sha512').update(fs.readFileSync(file)).digest('base64')}`;
  let files: { name: string; source: Buffer }[] = [];
  return {
    name: 'afrates-scalar',
    apply: 'build',
    buildStart() {
      if (!fs.existsSync(tarball) || digest(tarball) !== SCALAR.integrity) {
        fs.mkdirSync(cache, { recursive: true });
        const [packed] = JSON.parse(
          execFileSync('npm', ['pack', `@scalar/api-reference@${SCALAR.version}`, '--pack-destination', cache, '--json', '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }),
        ) as { filename: string }[];
        fs.renameSync(path.join(cache, packed!.filename), tarball);
      }
      const found = digest(tarball);
      if (found !== SCALAR.integrity) throw new Error(`@scalar/api-reference@${SCALAR.version}: its tarball's digest is ${found}, not web/src/scalar.ts's ${SCALAR.integrity}`);
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-scalar-'));
      try {
        execFileSync('tar', ['-xzf', tarball, '-C', out, 'package/dist/browser']);
        const browser = path.join(out, 'package', 'dist', 'browser');
        const walk = (dir: string): string[] =>
          fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
        files = walk(browser)
          .filter((f) => f.endsWith('.js') && !f.endsWith('standalone.js')) // the ES module and its chunks (standalone.js: the same as one script)
          .map((f) => ({ name: path.relative(browser, f), source: fs.readFileSync(f) }));
      } finally {
        fs.rmSync(out, { recursive: true, force: true });
      }
      if (!files.some((f) => `/assets/scalar-${SCALAR.version}/${f.name}` === SCALAR_ENTRY)) throw new Error(`no ${SCALAR_ENTRY} in @scalar/api-reference@${SCALAR.version}`);
    },
    generateBundle() {
      for (const f of files) this.emitFile({ type: 'asset', fileName: `assets/scalar-${SCALAR.version}/${f.name}`, source: f.source });
    },
  };
}

const METHODOLOGY = path.join(root, '..', 'docs', 'methodology.md');

/** A heading's anchor: its words, lowercase, joined by hyphens (as GitHub makes them). */
const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/[^a-z0-9 -]/g, '')
    .trim()
    .replace(/ +/g, '-');

/** Puts docs/methodology.md, as HTML, into methodology.html's <main>; rebuilt when the document changes. */
function methodologyPage(): Plugin {
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth }) {
        const text = this.parser.parseInline(tokens);
        return `<h${depth} id="${slug(text)}">${text}</h${depth}>\n`;
      },
    },
  });
  return {
    name: 'afrates-methodology',
    buildStart() {
      this.addWatchFile(METHODOLOGY);
    },
    transformIndexHtml: {
      order: 'pre',
      handler(html, ctx) {
        if (!ctx.filename.endsWith('methodology.html')) return html;
        const body = marked.parse(fs.readFileSync(METHODOLOGY, 'utf8'), { async: false });
        return html.replace(/<!-- docs\/methodology\.md[^>]*-->/, body);
      },
    },
  };
}

export default defineConfig({
  root,
  base: '/',
  publicDir: path.join(root, 'public'),
  logLevel: 'error', // rollup's notes on third-party comments are noise
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    rollupOptions: {
      input: {
        index: path.join(root, 'index.html'),
        dashboard: path.join(root, 'dashboard.html'),
        docs: path.join(root, 'docs.html'),
        status: path.join(root, 'status.html'),
        methodology: path.join(root, 'methodology.html'),
      },
    },
  },
  plugins: [methodologyPage(), scalarBundle(), precompress()],
});
