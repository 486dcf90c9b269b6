// Page weight and the board's first paint, measured in real Chromium (Debian's /usr/bin/chromium,
// the browser tests' setup in test/web/browser.ts).
// - weight: the compressed bytes (bodies as sent, plus response headers) of every response a
//   page's first load receives in a new, empty profile: HTML, scripts, styles, icon and the API
//   calls the page makes; /dashboard signed in (its charts drawn). Open event streams are left out
//   (they never finish). Limit: 250 KB each for /, /status, /methodology and /dashboard; /docs for information.
// - first paint of the board: from navigation start to the board's rows in the DOM (the page's own
//   performance mark 'board-painted'), median and slowest of RUNS loads, each in a new profile.
//   Limit: 1 s.
// Against a test API with six hours of market data (test/support/api.ts), or a running service:
//   node_modules/.bin/tsx bench/web.bench.ts [--url http://127.0.0.1:8080]   (e.g. beside make demo)
import type { Page } from 'playwright-core';
import { ensureWebBuilt, launch } from '../test/web/browser.js';
import { startTestApi, type TestApi } from '../test/support/api.js';
import { check, header, limitRow, machine, median, round, table } from './support.js';

const WEIGHT_LIMIT_KB = 250;
const PAINT_LIMIT_MS = 1_000;
const RUNS = 7;

interface Weight {
  readonly page: string;
  readonly bytes: number;
  readonly requests: number;
}

/** The compressed bytes of a page's first load in a new profile. */
async function weigh(base: string, urlPath: string, prepare?: (page: Page) => Promise<void>, ready?: (page: Page) => Promise<void>): Promise<Weight> {
  const browser = await launch();
  try {
    const page = await browser.page();
    if (prepare) {
      await page.goto(`${base}/favicon.svg`);
      await prepare(page);
    }
    const sizes: Promise<number>[] = [];
    page.on('requestfinished', (req) => sizes.push(req.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)));
    await page.goto(`${base}${urlPath}`, { waitUntil: 'load' }); // never networkidle: the board and dashboard hold a stream open
    if (ready) await ready(page);
    await page.waitForTimeout(1_000); // what the page fetches after it is ready (the chart's candles, the live rate)
    const all = await Promise.all(sizes);
    return { page: urlPath, bytes: all.reduce((a, b) => a + b, 0), requests: all.length };
  } finally {
    await browser.close();
  }
}

/** Milliseconds from navigation start to the board painted, in a new profile. */
async function firstPaint(base: string): Promise<number> {
  const browser = await launch();
  try {
    const page = await browser.page();
    await page.goto(`${base}/`);
    await page.waitForFunction(() => performance.getEntriesByName('board-painted').length > 0, undefined, { timeout: 10_000 });
    return await page.evaluate(() => performance.getEntriesByName('board-painted')[0]!.startTime);
  } finally {
    await browser.close();
  }
}

async function main(): Promise<void> {
  const urlArg = process.argv.indexOf('--url');
  const given = urlArg > 0 ? process.argv[urlArg + 1] : undefined;
  ensureWebBuilt();
  let t: TestApi | null = null;
  let base = given;
  let key: string | null = null;
  if (!base) {
    t = await startTestApi();
    base = t.api.url;
    key = t.keys.builder;
  }
  header('web: page weight and the board\'s first paint in Chromium', [
    given ? `server: ${given}` : 'server: the test API (embedded TimescaleDB, six hours of market data) on 127.0.0.1',
    'weight: compressed bodies plus response headers of every response of a first load (new profile), event streams left out',
    `first paint: navigation start to the board's rows (mark 'board-painted'), ${RUNS} loads, each in a new profile`,
  ]);
  try {
    const weights: Weight[] = [];
    weights.push(await weigh(base, '/', undefined, (p) => p.waitForSelector('#board tbody tr[data-pair]').then(() => undefined)));
    weights.push(await weigh(base, '/status', undefined, (p) => p.waitForSelector('#pairs tbody tr[data-pair]').then(() => undefined)));
    weights.push(await weigh(base, '/methodology', undefined, (p) => p.waitForSelector('#parameters').then(() => undefined)));
    if (key) {
      const signedIn = key;
      weights.push(
        await weigh(
          base,
          '/dashboard',
          (p) => p.evaluate((k) => sessionStorage.setItem('afrates.apiKey', k), signedIn),
          (p) => p.waitForSelector('#candles[data-candles]').then(() => undefined),
        ),
      );
    } else {
      weights.push(await weigh(base, '/dashboard')); // signed out: no key for a server we did not start
    }
    const docs = await weigh(base, '/docs', undefined, (p) => p.waitForSelector('#reference aside', { timeout: 30_000 }).then(() => undefined));

    const paints: number[] = [];
    for (let i = 0; i < RUNS; i++) paints.push(await firstPaint(base));

    console.log(
      table([
        ['figure', 'value', 'limit', 'ratio'],
        ...weights.map((w) => limitRow(`${w.page} first load, KB compressed (${w.requests} responses)`, w.bytes / 1024, WEIGHT_LIMIT_KB)),
        [`/docs first load, KB compressed (${docs.requests} responses)`, docs.bytes / 1024, '-', 'lazily loaded reference, no limit'],
        limitRow('board first paint, median ms', median(paints), PAINT_LIMIT_MS),
        limitRow('board first paint, slowest ms', Math.max(...paints), PAINT_LIMIT_MS),
      ]),
    );
    console.log('');
    console.log(
      JSON.stringify({
        bench: 'web',
        at: new Date().toISOString(),
        machine: machine(),
        server: given ? 'given' : 'test',
        weight_kb: Object.fromEntries([...weights, docs].map((w) => [w.page, round(w.bytes / 1024, 1)])),
        first_paint_ms: { median: round(median(paints)), max: round(Math.max(...paints)), runs: paints.map((p) => round(p)) },
        limits: { weight_kb: WEIGHT_LIMIT_KB, first_paint_ms: PAINT_LIMIT_MS },
      }),
    );
    check(weights.every((w) => w.requests > 0), 'a page loaded nothing');
  } finally {
    await t?.close();
  }
}

await main();
