// Builds the web front end into web/dist: four pages (/, /dashboard, /docs, /status), their
// scripts and styles bundled with content-hashed names under assets/, and a gzip and brotli copy
// of every text file beside it, so the API (api/web.ts) never compresses a page per request.
// The API reference (Scalar) is a lazily loaded chunk of /docs only. /methodology is
// docs/methodology.md rendered into its page at build time.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { Marked } from 'marked';
import { defineConfig, type Plugin } from 'vite';

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
    // the API reference chunk is large by nature and only /docs loads it
    chunkSizeWarningLimit: 6000,
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
  plugins: [methodologyPage(), precompress()],
});
