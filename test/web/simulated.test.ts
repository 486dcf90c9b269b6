// The web pages of a service on the simulated market (make demo) say their data are simulated, as
// the API says in every answer (X-Afrates-Data: simulated); the same pages of a service on the
// real market say nothing of the kind. Real Chromium, as the other browser tests.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.js';
import { axeViolations, ensureWebBuilt, launch, type Browser } from './browser.js';

let simulated: TestApi;
let real: TestApi;
let browser: Browser;

beforeAll(async () => {
  ensureWebBuilt();
  [simulated, real, browser] = await Promise.all([startTestApi({ hours: 2, env: { MARKET: 'simulated' } }), startTestApi({ hours: 2 }), launch()]);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await simulated?.close();
  await real?.close();
});

const PAGES = [
  ['the live board', '/'],
  ['the status page', '/status'],
  ['the dashboard, signed out', '/dashboard'],
] as const;

describe('on the simulated market', () => {
  it.each(PAGES)('%s says its data are simulated, accessibly', async (_, urlPath) => {
    const page = await browser.page();
    const res = await page.goto(`${simulated.api.url}${urlPath}`);
    expect(res?.status()).toBe(200);
    const note = page.locator('#main [role="note"]', { hasText: 'Simulated data.' });
    await note.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await note.textContent()).toContain('no rate, candle or fixing shown here is a real market price');
    // the first thing in the page's content
    expect(await page.evaluate(() => document.querySelector('#main')?.firstElementChild?.id)).toBe('simulated-note');
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });
});

describe('on the real market', () => {
  it.each(PAGES)('%s says nothing of the kind', async (_, urlPath) => {
    const page = await browser.page();
    // the page's first answer from the API is the one that would have put the note up
    const answered = page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/v1/'));
    await page.goto(`${real.api.url}${urlPath}`);
    expect((await answered).headers()['x-afrates-data']).toBeUndefined();
    await page.evaluate(() => new Promise((r) => setTimeout(r, 200)));
    expect(await page.locator('#simulated-note').count()).toBe(0);
    await page.close();
  });
});
