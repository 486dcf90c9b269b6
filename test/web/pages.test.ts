// The web pages in real Chromium against a test API with market data: the board and its update
// after a cycle, the free-key form, the dashboard (sign in, usage rising, create, rotate and revoke
// keys with the old key refused, a drawn candle chart), the API reference listing every operation,
// the status page listing every pair; each page at desktop and phone width with no accessibility
// violation (axe-core), no console error and no request to another host. Screenshots go to
// var/screenshots/.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../api/routes/index.js';
import { refreshAggregates } from '../../lib/db/refresh.js';
import { insertTrades } from '../../pipeline/store.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { openStream } from '../api/sse-client.js';
import { axeViolations, canvasDrawn, ensureWebBuilt, launch, type Browser } from './browser.js';
import { fixingSlot, type FixingKind } from '../../lib/methodology/fixings.js';

const SHOTS = path.resolve(import.meta.dirname, '../../var/screenshots');
const KEY = /^afr_live_[0-9A-Za-z]{32}$/;
const PHONE = { width: 390, height: 844 };

let t: TestApi;
let browser: Browser;
let freeKey = '';

beforeAll(async () => {
  ensureWebBuilt();
  fs.mkdirSync(SHOTS, { recursive: true });
  // a day and more of market, with the fixings it made due: the dashboard's fixings have some
  [t, browser] = await Promise.all([startTestApi({ hours: 30, fixings: true }), launch()]);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.api.url });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function open(urlPath: string, size: { width: number; height: number } = { width: 1280, height: 900 }): Promise<Page> {
  const page = await browser.page(size.width, size.height);
  const res = await page.goto(`${t.api.url}${urlPath}`);
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toContain("default-src 'self'");
  return page;
}

/** No accessibility violation, at the width the page is open at. */
async function accessible(page: Page): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
}

async function shot(page: Page, name: string, fullPage = false): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

describe('the home page', () => {
  it('shows every pair on the live board, accessibly, at desktop and phone width', async () => {
    for (const [size, name] of [[undefined, 'home'], [PHONE, 'home-phone']] as const) {
      const page = await open('/', size);
      await page.waitForSelector('#board tbody tr[data-pair]');
      const pairs = await page.$$eval('#board tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.pair));
      expect(pairs.sort()).toEqual([...t.api.deps.pairs.keys()].sort());
      expect(await page.textContent('#board tr[data-pair="BTCNGN"]')).toMatch(/NGN.*verified|caution|unverified/s);
      await accessible(page);
      await shot(page, name);
      await page.close();
    }
  });

  it('issues a free key through the form, shown once with a copy button', async () => {
    const page = await open('/');
    await page.fill('#fk-email', `web-${Date.now()}@example.test`);
    await page.fill('#fk-name', 'Web Test');
    await page.click('#free-key button[type=submit]');
    await page.waitForSelector('#fk-result:not([hidden])');
    freeKey = await page.inputValue('#fk-key');
    expect(freeKey).toMatch(KEY);
    await page.click('#fk-copy');
    await expect.poll(() => page.textContent('#fk-copied')).toMatch(/Copied/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(freeKey);
    expect((await t.get('/v1/rates/live?pairs=BTCNGN', freeKey)).status).toBe(200);
    await page.close();
  });

  it('updates the board after a collection cycle', async () => {
    const page = await open('/');
    await page.waitForSelector('#board tbody tr[data-pair]');
    const snapshot = await page.getAttribute('#board', 'data-snapshot');
    const rate = await page.textContent('#board tr[data-pair="BTCNGN"] td:nth-child(2)');
    // a cycle: new trades well above the market, candles refreshed, the snapshot rebuilt
    const now = Date.now();
    const trades = ['luno', 'quidax'].flatMap((exchange) =>
      Array.from({ length: 5 }, (_, i) => ({ time: new Date(now - 5_000 + i), exchange, pair: 'BTCNGN', tradeId: `web-${exchange}-${now}-${i}`, price: 190_000_000, amount: 5, side: 'buy' as const })),
    );
    await insertTrades(t.db.sql, trades);
    await refreshAggregates(t.db.sql);
    await t.api.deps.snapshot.refresh();
    await expect.poll(() => page.getAttribute('#board', 'data-snapshot'), { timeout: 10_000 }).not.toBe(snapshot);
    expect(await page.textContent('#board tr[data-pair="BTCNGN"] td:nth-child(2)')).not.toBe(rate);
    await page.close();
  });
});

describe('the dashboard', () => {
  let page: Page;
  let builderKey = '';

  const minuteUsed = async () => Number(await page.getAttribute('#minute-text', 'data-used'));
  const keyRows = () => page.$$eval('#keys tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.keyId));

  it('signs in with a key kept in sessionStorage only, and shows tier, limits and usage', async () => {
    builderKey = await t.key('builder');
    page = await open('/dashboard');
    await accessible(page); // the sign-in form
    await page.fill('#signin-key', builderKey);
    await page.click('#signin-form button[type=submit]');
    await page.waitForSelector('#account:not([hidden])');
    expect(await page.textContent('#plan')).toMatch(/Builder/);
    expect(await page.evaluate(() => sessionStorage.getItem('afrates.apiKey'))).toBe(builderKey);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await minuteUsed()).toBeGreaterThan(0);
  });

  it('shows usage rising after an API call', async () => {
    const before = await minuteUsed();
    await page.click('#try-call');
    await expect.poll(minuteUsed).toBeGreaterThan(before);
    expect(await page.textContent('#try-result')).toContain('"BTCNGN"');
  });

  it('draws a candlestick chart of the chosen pair with the synthetic price', async () => {
    await page.waitForSelector('#candles[data-candles]');
    expect(Number(await page.getAttribute('#candles', 'data-candles'))).toBeGreaterThan(0);
    await expect.poll(() => canvasDrawn(page, '#candles')).toBe(true);
    expect(await page.textContent('#chart-note')).toMatch(/synthetic price/);
    await page.waitForSelector('#live [data-live-rate]'); // the key's stream
    await page.selectOption('#chart-interval', '5m');
    await expect.poll(() => page.textContent('#chart-note')).toMatch(/5m candles/);
    await expect.poll(() => canvasDrawn(page, '#candles')).toBe(true);
    await accessible(page);
    await shot(page, 'dashboard', true);
  });

  it("shows the chosen pair's daily fixings as a chart and newest first in a table", async () => {
    await page.waitForSelector('#fixings-chart[data-fixings]');
    const published = await t.db.sql<{ id: string; kind: FixingKind; date: string }[]>`SELECT id, kind, date::text FROM fixings WHERE pair = 'BTCNGN' ORDER BY time DESC`;
    expect(published.length).toBeGreaterThan(0);
    expect(Number(await page.getAttribute('#fixings-chart', 'data-fixings'))).toBe(published.length);
    await expect.poll(() => canvasDrawn(page, '#fixings-chart')).toBe(true);
    const rows = await page.$$eval('#fixings tbody tr[data-fixing]', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.fixing));
    expect(rows).toEqual(published.slice(0, 14).map((r) => r.id));
    // each named by its time on its own clock, as the methodology's slot says it ("16:00 Lagos", "00:00 UTC")
    const names = await page.$$eval('#fixings tbody tr[data-fixing] td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    const slots = published.slice(0, 14).map((r) => fixingSlot(r.kind, 'NGN', r.date));
    expect(names).toEqual(slots.map((f) => `${f.localTime.slice(11, 16)} ${f.zone.replace('Africa/', '')}`));
    await accessible(page);
  });

  it('creates a key, rotates it (the old one refused at once) and revokes one', async () => {
    await page.fill('#new-key-label', 'staging');
    await page.click('#new-key button[type=submit]');
    await page.waitForSelector('#issued:not([hidden])');
    const staging = await page.inputValue('#issued-key');
    expect(staging).toMatch(KEY);
    await expect.poll(keyRows).toHaveLength(2);
    expect((await t.get('/v1/pairs', staging)).status).toBe(200);

    const stagingId = (await keyRows())[1]!;
    await page.click(`#keys tr[data-key-id="${stagingId}"] button[data-action=rotate]`);
    await expect.poll(() => page.inputValue('#issued-key')).not.toBe(staging);
    const replacement = await page.inputValue('#issued-key');
    expect(replacement).toMatch(KEY);
    expect((await t.get('/v1/pairs', staging)).status).toBe(401);
    expect((await t.get('/v1/pairs', replacement)).status).toBe(200);
    await expect.poll(async () => (await keyRows()).includes(stagingId)).toBe(false);

    // two rows now: this session's key and the replacement; revoke the replacement
    const current = await page.getAttribute('#keys tbody tr:has-text("this session")', 'data-key-id');
    const toRevoke = (await keyRows()).find((id) => id !== current)!;
    await page.click(`#keys tr[data-key-id="${toRevoke}"] button[data-action=revoke]`);
    await expect.poll(keyRows).toHaveLength(1);
    expect((await t.get('/v1/pairs', replacement)).status).toBe(401);
    expect((await t.get('/v1/pairs', builderKey)).status).toBe(200);
  });

  it("shows this session's replacement as the key in use, and signing out leaves no key or answer for the next person", async () => {
    const shownBefore = await page.inputValue('#issued-key'); // the last test's replacement
    await page.click('#keys tr:has-text("this session") button[data-action=rotate]');
    await expect.poll(() => page.inputValue('#issued-key')).not.toBe(shownBefore);
    const replacement = await page.inputValue('#issued-key');
    expect(replacement).toMatch(KEY);
    await expect.poll(() => page.textContent('#plan'), { timeout: 5_000 }).toContain(replacement.slice(0, 13)); // not the revoked key's prefix
    await page.click('#try-call');
    await expect.poll(() => page.textContent('#try-result')).toContain('"BTCNGN"');

    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.isHidden('#issued')).toBe(true);
    expect(await page.inputValue('#issued-key')).toBe('');
    expect(await page.isHidden('#try-result')).toBe(true);
    // another customer signs in on the same tab
    await page.fill('#signin-key', freeKey);
    await page.click('#signin-form button[type=submit]');
    await page.waitForSelector('#account:not([hidden])');
    expect(await page.isHidden('#issued')).toBe(true);
    expect(await page.content()).not.toContain(replacement);
    await page.waitForSelector('#live [data-live-rate]'); // the free key's own stream
  });

  it('works at phone width, and a free key sees the candles without the paid fields', async () => {
    await page.close();
    // a key of its own: a sign-in spends five of a free key's ten requests a minute, and freeKey
    // signed in moments ago
    page = await open('/dashboard', PHONE);
    await page.evaluate((k) => sessionStorage.setItem('afrates.apiKey', k), await t.key('free'));
    await page.reload();
    await page.waitForSelector('#account:not([hidden])');
    expect(await page.textContent('#plan')).toMatch(/Free/);
    await page.waitForSelector('#candles[data-candles]');
    expect(await page.textContent('#chart-note')).toMatch(/Builder tier and up/);
    await expect.poll(() => canvasDrawn(page, '#candles')).toBe(true);
    await accessible(page);
    await shot(page, 'dashboard-phone');
    await page.close();
  });
});

describe('the dashboard when things go wrong', () => {
  // The refused streams' pages run in a browser of their own, whose clock the tests move past the
  // 5 s a retry would wait (Playwright's clock is a whole context's: the other pages keep the real one).
  let clocked: Browser;
  beforeAll(async () => {
    clocked = await launch();
    await clocked.context.clock.install();
  }, 120_000);
  afterAll(async () => {
    await clocked?.close();
    // its pages' requests and errors are every page's too (the last test)
    browser.requests.push(...(clocked?.requests ?? []));
    browser.errors.push(...(clocked?.errors ?? []));
  });

  /**
   * Chromium logs a refused request as a console error: these tests cause one on purpose. It is
   * logged once the answer is in, which can be after the page has shown what the test waits for.
   */
  const expectRefusalLogged = async (status: number, from: Browser = browser) => {
    const refused = (e: string) => e.includes(`Failed to load resource: the server responded with a status of ${status}`);
    await expect.poll(() => from.errors.some(refused)).toBe(true);
    from.errors.splice(from.errors.findIndex(refused), 1);
  };

  /** Signs the dashboard in with `key`: its stream, refused for the key's cap, is tried once and paused (past the 5 s retry time). */
  const expectStreamPausedAfterOneTry = async (page: Page, key: string, tries: () => number) => {
    await page.goto(`${t.api.url}/dashboard`);
    await page.evaluate((k) => sessionStorage.setItem('afrates.apiKey', k), key);
    await page.reload();
    await expect.poll(() => page.textContent('#live')).toMatch(/Live updates paused: .*1 open stream per key/);
    await page.clock.runFor(7_000); // every timer of the next 7 s fired
    // a request sent after them: a retry's, had one been sent, is seen before this one's answer
    await page.evaluate(() => fetch('/v1/health').then((r) => r.status));
    expect(tries()).toBe(1);
    await expectRefusalLogged(429, clocked);
  };

  it("does not spend a key's budget retrying a stream its cap refuses (another tab holds it)", async () => {
    // Free keys may hold one stream: a second tab's dashboard is refused with 429. Each try counts
    // as a request; retried every 5 s, the tab spent the key's minute and month on refusals.
    const key = await t.key('free');
    const other = await openStream(`${t.api.url}/v1/rates/stream?pairs=BTCNGN`, { 'X-API-Key': key });
    const page = await clocked.page(1280, 900);
    try {
      expect(other.status).toBe(200);
      let tries = 0;
      page.on('request', (r) => void (new URL(r.url()).pathname === '/v1/rates/stream' && tries++));
      await expectStreamPausedAfterOneTry(page, key, () => tries);
    } finally {
      other.close();
      await page.close();
    }
  }, 30_000);

  it("does not retry a stream its cap refused on the minute's last request", async () => {
    // The server's answer when the cap refuses the minute's last request: X-RateLimit-Remaining is 0
    // as after a spent minute, and only RateLimit tells them apart. Taken from the server, then
    // given to the page for its stream.
    // The minute is a fixed window: a minute that turns over between the requests gives its refusal
    // budget back, so the sequence is played again (on a fresh key) until one minute holds it.
    let refused: Response | undefined;
    for (let attempt = 0; attempt < 3 && refused?.headers.get('X-RateLimit-Remaining') !== '0'; attempt++) {
      const key = await t.key('free');
      const other = await openStream(`${t.api.url}/v1/rates/stream?pairs=BTCNGN`, { 'X-API-Key': key });
      let remaining = '';
      while (remaining !== '1') remaining = (await t.get('/v1/rates/live?pairs=BTCNGN', key)).headers.get('X-RateLimit-Remaining') ?? '1';
      refused = await fetch(`${t.api.url}/v1/rates/stream?pairs=BTCNGN`, { headers: { 'X-API-Key': key } });
      other.close();
    }
    if (!refused) throw new Error('no refusal');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('X-RateLimit-Remaining')).toBe('0');
    const headers = Object.fromEntries([...refused.headers].filter(([name]) => !['content-encoding', 'content-length'].includes(name)));
    const answer = { status: 429, headers, body: await refused.text() };
    const page = await clocked.page(1280, 900);
    try {
      let tries = 0;
      await page.route(
        (url) => url.pathname === '/v1/rates/stream',
        (route) => {
          tries++;
          return route.fulfill(answer);
        },
      );
      await expectStreamPausedAfterOneTry(page, await t.key('builder'), () => tries);
    } finally {
      await page.close();
    }
  }, 30_000);

  it('shows the replacement of its own key even when the reload after rotating fails', async () => {
    const key = await t.key('builder');
    const page = await browser.page(1280, 900);
    try {
      await page.goto(`${t.api.url}/dashboard`);
      await page.evaluate((k) => sessionStorage.setItem('afrates.apiKey', k), key);
      await page.reload();
      await page.waitForSelector('#keys tbody tr:has-text("this session")');
      // the account fails to load right after the rotation (a blip, a deploy)
      await page.route(
        (url) => url.pathname === '/v1/account',
        (route) => route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ error: 'service_unavailable', message: 'Retry shortly.', status: 503 }) }),
      );
      await page.click('#keys tr:has-text("this session") button[data-action=rotate]');
      await page.waitForSelector('#issued:not([hidden])');
      const replacement = await page.inputValue('#issued-key');
      expect(replacement).toMatch(KEY);
      expect((await t.get('/v1/pairs', key)).status).toBe(401); // the old key is refused already
      expect((await t.get('/v1/pairs', replacement)).status).toBe(200);
      await expectRefusalLogged(503);
    } finally {
      await page.close();
    }
  });
});

describe('the API reference', () => {
  it('renders /v1/openapi.json with every operation, from this origin only', async () => {
    const page = await open('/docs');
    await page.waitForSelector('#reference aside', { timeout: 30_000 });
    for (const op of operations) {
      await expect.poll(() => page.locator('#reference aside').getByText(op.summary, { exact: true }).count(), { message: op.summary }).toBeGreaterThan(0);
    }
    await accessible(page);
    await shot(page, 'docs');
    await page.close();
  });

  /** The value and placeholder of the reference's API key field, once it is rendered. */
  async function keyField(page: Page): Promise<{ value: string; placeholder: string }> {
    const field = page.locator('#reference form').first().getByLabel('Value', { exact: true });
    await field.waitFor({ state: 'attached', timeout: 30_000 });
    await expect.poll(() => field.getAttribute('placeholder')).not.toBe('QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT');
    return { value: await field.inputValue(), placeholder: (await field.getAttribute('placeholder')) ?? '' };
  }

  it('leaves the key field empty when nobody is signed in', async () => {
    const page = await open('/docs');
    expect(await keyField(page)).toEqual({ value: '', placeholder: '' });
    expect(await page.locator('#reference').innerText()).not.toContain('QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT');
    await page.close();
  });

  it('fills the key field with the key signed in on the dashboard', async () => {
    const key = `afr_live_${'K'.repeat(32)}`;
    const page = await browser.page(1280, 900);
    await page.addInitScript((k) => sessionStorage.setItem('afrates.apiKey', k), key);
    await page.goto(`${t.api.url}/docs`);
    expect(await keyField(page)).toEqual({ value: key, placeholder: '' });
    await page.close();
  });
});

describe('the status page', () => {
  it('lists every pair with its sources, and recent cycles', async () => {
    for (const [size, name] of [[undefined, 'status'], [PHONE, 'status-phone']] as const) {
      const page = await open('/status', size);
      await page.waitForSelector('#pairs tbody tr[data-pair]');
      const pairs = await page.$$eval('#pairs tbody tr', (rows) => rows.map((r) => (r as HTMLElement).dataset.pair));
      expect(pairs.sort()).toEqual([...t.api.deps.pairs.keys()].sort());
      expect(await page.textContent('#pairs tr[data-pair="BTCZAR"]')).toMatch(/binance, luno, valr/);
      expect(await page.locator('#cycles tbody tr').count()).toBeGreaterThan(0);
      await accessible(page);
      await shot(page, name);
      await page.close();
    }
  });
});

describe('every page', () => {
  it('made no request to another host, never put a key in a URL, and logged no console error', () => {
    const origin = new URL(t.api.url).origin;
    expect(browser.requests.length).toBeGreaterThan(20);
    expect(browser.requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin)).toEqual([]);
    expect(browser.requests.filter((u) => u.includes('afr_live_'))).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
