// Serves the web front end (web/, built by Vite into web/dist) on the API's own origin:
// the pages /, /dashboard, /docs, /status and /methodology, and their assets under /assets/. Files are read
// once into memory with the gzip and brotli copies made at build time, so nothing is compressed
// per request; hashed assets are cached for a year, pages revalidated. Every page carries a
// Content-Security-Policy that admits this origin only: no script, style, font, image or request
// can come from anywhere else. Without a build, the pages answer 404 naming the command.
// Beside them, the certificate verifier verify/afrates-verify.mjs is served as a download at
// /verify/afrates-verify.mjs (no key: anyone may check a certificate), cached like any other file.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type Koa from 'koa';
import type { AppState } from './context.js';
import { acceptsGzip } from './middleware/compress.js';
import { notFound } from './errors.js';

const PAGES: Readonly<Record<string, string>> = {
  '/': 'index.html',
  '/dashboard': 'dashboard.html',
  '/docs': 'docs.html',
  '/status': 'status.html',
  '/methodology': 'methodology.html',
};

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * 'self' only. Styles also allow inline ones on /docs alone: the API reference (Scalar, a Vue app)
 * sets style elements at run time; scripts never run inline anywhere.
 */
function csp(page: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    `style-src 'self'${page === '/docs' ? " 'unsafe-inline'" : ''}`,
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

interface WebFile {
  readonly type: string;
  readonly identity: Buffer;
  readonly gzip: Buffer | null;
  readonly br: Buffer | null;
  readonly immutable: boolean;
}

/** web/dist beside the source tree (api/web.ts) or the compiled one (dist/api/web.js). */
export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../web/dist');

/** Every file of the build, by URL path; empty when there is no build. */
export function loadWebFiles(dir = WEB_DIST): Map<string, WebFile> {
  const files = new Map<string, WebFile>();
  if (!fs.existsSync(dir)) return files;
  const walk = (sub: string) => {
    for (const entry of fs.readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (!/\.(gz|br|map)$/.test(entry.name)) {
        const full = path.join(dir, rel);
        const read = (suffix: string) => (fs.existsSync(full + suffix) ? fs.readFileSync(full + suffix) : null);
        files.set(`/${rel}`, {
          type: TYPES[path.extname(entry.name)] ?? 'application/octet-stream',
          identity: fs.readFileSync(full),
          gzip: read('.gz'),
          br: read('.br'),
          immutable: rel.startsWith('assets/'),
        });
      }
    }
  };
  walk('');
  return files;
}

/** Where the certificate verifier is served. */
export const VERIFIER_PATH = '/verify/afrates-verify.mjs';
/** verify/afrates-verify.mjs beside the source tree or the compiled one (dist/verify, copied by the build). */
export const VERIFIER_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../verify/afrates-verify.mjs');

/** The verifier as a served file (its gzip copy made once, here); null when the file is absent. */
export function loadVerifier(file = VERIFIER_FILE): WebFile | null {
  if (!fs.existsSync(file)) return null;
  const identity = fs.readFileSync(file);
  return { type: TYPES['.mjs']!, identity, gzip: zlib.gzipSync(identity, { level: 9 }), br: null, immutable: false };
}

/** Whether an Accept-Encoding header admits brotli (q > 0). */
function acceptsBrotli(header: string): boolean {
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return coding === 'br' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

/** What a request for a page or file is counted under in the metrics: the page, '/assets/*', or null (not one of them). */
export function webRoute(urlPath: string): string | null {
  if (PAGES[urlPath]) return urlPath;
  if (urlPath.endsWith('/') && PAGES[urlPath.slice(0, -1)]) return urlPath.slice(0, -1);
  if (urlPath.startsWith('/assets/')) return '/assets/*';
  return urlPath === '/favicon.svg' || urlPath === VERIFIER_PATH ? urlPath : null;
}

export function serveWeb(files = loadWebFiles(), verifier = loadVerifier()): Koa.Middleware<AppState> {
  const downloads = new Map(verifier ? [[VERIFIER_PATH, verifier]] : []);
  // not async: an API request passes straight on, without a promise of its own
  return function serveWeb(ctx, next) {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path.startsWith('/v1/')) return next(); // the API's own
    if (ctx.path === VERIFIER_PATH) {
      serveFile(ctx, downloads, VERIFIER_PATH, undefined);
      return Promise.resolve();
    }
    const page = PAGES[ctx.path] ?? PAGES[ctx.path.replace(/\/$/, '')];
    const name = page ? `/${page}` : ctx.path.startsWith('/assets/') || ctx.path === '/favicon.svg' ? ctx.path : null;
    if (!name) return next();
    serveFile(ctx, files, name, page);
    return Promise.resolve();
  };
}

function serveFile(ctx: Koa.ParameterizedContext<AppState>, files: Map<string, WebFile>, name: string, page: string | undefined): void {
  const file = files.get(name);
  if (!file) {
    if (page && files.size === 0) throw notFound('The web front end is not built: run `make web` (make run and make demo build it).');
    throw notFound(`No such file: ${ctx.path.slice(0, 100)}`);
  }
  ctx.type = file.type; // nosniff and no-referrer, as on every answer: api/middleware/headers.ts
  if (page) {
    ctx.set('Content-Security-Policy', csp(ctx.path.replace(/\/$/, '') || '/'));
    ctx.set('Cache-Control', 'no-cache');
  } else {
    ctx.set('Cache-Control', file.immutable ? 'public, max-age=31536000, immutable' : 'public, max-age=3600');
  }
  ctx.vary('Accept-Encoding');
  const accept = ctx.get('Accept-Encoding');
  if (file.br && acceptsBrotli(accept)) {
    ctx.set('Content-Encoding', 'br');
    ctx.body = file.br;
  } else if (file.gzip && acceptsGzip(accept)) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = file.gzip;
  } else {
    ctx.body = file.identity;
  }
}
