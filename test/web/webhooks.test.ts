// The dashboard's webhooks section in real Chromium, against a test API whose delivery worker sends
// to a real local receiver: add an endpoint (the signing secret shown once, and it is the one the
// deliveries are signed with), send a test event and see it delivered with its attempt, an endpoint
// disabled after failing for a day saying why and enabled again, delete; a Free key told the tier
// needed; accessible at desktop and phone width, no console error, no request to another host.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emitEvent } from '../../lib/webhooks/events.js';
import { createSecretBox } from '../../lib/webhooks/secrets.js';
import { SIGNATURE_HEADER, verifySignature } from '../../lib/webhooks/signature.js';
import { WebhookWorker } from '../../pipeline/webhooks/worker.js';
import { startTestApi, type TestApi } from '../support/api.js';
import { testLog } from '../support/db.js';
import { startReceiver, type Receiver } from '../support/webhooks.js';
import { axeViolations, ensureWebBuilt, launch, type Browser } from './browser.js';

const SHOTS = path.resolve(import.meta.dirname, '../../var/screenshots');
const SECRET_KEY = '7a'.repeat(32);
const secrets = createSecretBox({ keyHex: SECRET_KEY, keyDir: '/nonexistent' });
let t: TestApi;
let browser: Browser;
let worker: WebhookWorker;
let receiver: Receiver;
let page: Page;

beforeAll(async () => {
  ensureWebBuilt();
  fs.mkdirSync(SHOTS, { recursive: true });
  [t, browser, receiver] = await Promise.all([startTestApi({ env: { WEBHOOKS_ALLOW_PRIVATE: '1', WEBHOOK_SECRET_KEY: SECRET_KEY } }), launch(), startReceiver()]);
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.api.url });
  worker = new WebhookWorker({ sql: t.db.sql, log: testLog, secrets, allowPrivate: true, pollMs: 100 });
  worker.start();
}, 300_000);
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
  await browser?.close();
  await t?.close();
});

async function signIn(key: string, size = { width: 1280, height: 900 }): Promise<Page> {
  const p = await browser.page(size.width, size.height);
  await p.goto(`${t.api.url}/dashboard`);
  await p.evaluate((k) => sessionStorage.setItem('afrates.apiKey', k), key);
  await p.reload();
  await p.waitForSelector('#account:not([hidden])');
  return p;
}

const rows = () => page.$$eval('#webhooks tbody tr', (trs) => trs.map((r) => ({ id: (r as HTMLElement).dataset.endpointId, state: (r as HTMLElement).dataset.state, text: r.textContent ?? '' })));

describe('the webhooks section of the dashboard', () => {
  let secret = '';

  it('adds an endpoint with the events chosen, and shows its signing secret once with a copy button', async () => {
    page = await signIn(await t.key('builder'));
    await page.waitForSelector('#webhooks-body:not([hidden])');
    // the event choices come with the endpoints' listing, after the section is shown
    await page.waitForSelector('#webhook-events input');
    expect(await page.$$eval('#webhook-events input', (inputs) => inputs.map((i) => (i as HTMLInputElement).value))).toEqual(['pair.divergence', 'pair.stale', 'source.failing', 'heartbeat']);
    expect(await axeViolations(page)).toEqual([]);

    await page.fill('#webhook-url', receiver.url);
    await page.check('#webhook-event-pair-stale');
    await page.check('#webhook-event-heartbeat');
    await page.fill('#webhook-stale', '600');
    await page.click('#new-webhook button[type=submit]');
    await page.waitForSelector('#webhook-secret:not([hidden])');
    secret = await page.inputValue('#webhook-secret-value');
    expect(secret).toMatch(/^whsec_[0-9A-Za-z_-]{32}$/);
    await page.click('#webhook-secret-copy');
    await expect.poll(() => page.textContent('#webhook-secret-copied')).toMatch(/Copied/);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await expect.poll(rows).toHaveLength(1);
    const [row] = await rows();
    expect(row!.text).toContain(receiver.url);
    expect(row!.text).toContain('pair.stale, heartbeat');
    expect(row!.text).toContain(secret.slice(0, 10));
    expect(row!.state).toBe('enabled');
    expect(await page.textContent('#webhooks-limit')).toBe('1 of 3 endpoints this tier allows.');
  });

  it('refuses a bad URL in the contract’s words, beside the form', async () => {
    await page.fill('#webhook-url', 'ftp://hooks.example.com/x');
    await page.check('#webhook-event-pair-stale');
    await page.click('#new-webhook button[type=submit]');
    await expect.poll(() => page.textContent('#webhooks-error')).toMatch(/'url' must start with https:\/\//);
    const at = browser.errors.findIndex((e) => e.includes('status of 400'));
    expect(at).toBeGreaterThanOrEqual(0);
    browser.errors.splice(at, 1); // Chromium logs the refused request; that is the point here
    await page.fill('#webhook-url', '');
  });

  it('sends a test event: it arrives signed with the secret shown, and is listed delivered with its attempt', async () => {
    const before = receiver.received.length;
    await page.click('#webhooks tbody tr button[data-action=test]');
    await receiver.waitFor(before + 1);
    const got = receiver.received.at(-1)!;
    expect(got.type).toBe('test');
    expect(verifySignature(secret, got.headers[SIGNATURE_HEADER.toLowerCase()] as string, got.body)).toBe(true);
    await page.waitForSelector(`#deliveries tr[data-event-id="${got.id}"][data-state="delivered"]`, { timeout: 15_000 });
    expect(await page.textContent(`#deliveries tr[data-event-id="${got.id}"]`)).toMatch(/#1 .*HTTP 200/);
    expect(await axeViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SHOTS, 'dashboard-webhooks.png'), fullPage: true });
  });

  it('shows an endpoint that failed every delivery for a day as disabled, with the reason, and enables it again', async () => {
    const id = (await rows())[0]!.id!;
    const dead = await startReceiver(() => 500);
    await worker.stop(); // its deliveries are on today's clock; these are on a clock moved a day on
    try {
      await t.db.sql`UPDATE webhook_endpoints SET url = ${dead.url} WHERE id = ${id}`;
      const t0 = Date.now();
      let clock = t0;
      const late = new WebhookWorker({ sql: t.db.sql, log: testLog, secrets, allowPrivate: true, now: () => clock });
      for (const at of [t0, t0 + 24 * 3_600_000 + 1]) {
        clock = at;
        await emitEvent(t.db.sql, { type: 'heartbeat', endpointId: Number(id), data: { interval_seconds: 3_600 }, at: new Date(at) });
        await late.runOnce();
      }
      await late.stop();
      await page.reload();
      await page.waitForSelector('#webhooks tbody tr[data-state="disabled"]');
      expect(await page.textContent('#webhooks tbody tr')).toMatch(/disabled.*every delivery failed for 24 hours \(last: HTTP 500\)/);
      await t.db.sql`UPDATE webhook_endpoints SET url = ${receiver.url} WHERE id = ${id}`;
      await page.click('#webhooks tbody tr button[data-action=enable]');
      await page.waitForSelector('#webhooks tbody tr[data-state="enabled"]');
      expect(await page.$('#webhooks tbody tr button[data-action=enable]')).toBeNull();
    } finally {
      worker.start();
      await dead.close();
    }
  });

  it('deletes an endpoint', async () => {
    await page.click('#webhooks tbody tr button[data-action=delete]');
    await expect.poll(rows).toHaveLength(0);
    expect((await t.get('/v1/account/webhooks', await page.evaluate(() => sessionStorage.getItem('afrates.apiKey')))).body.endpoints).toEqual([]);
  });

  it('signing out leaves no secret for the next person; a Free key is told the tier needed, at phone width too', async () => {
    await page.click('#signout');
    await page.waitForSelector('#signin:not([hidden])');
    expect(await page.inputValue('#webhook-secret-value')).toBe('');
    expect(await page.isHidden('#webhook-secret')).toBe(true);
    await page.close();
    page = await signIn(await t.key('free'), { width: 390, height: 844 });
    await page.waitForSelector('#webhooks-unavailable:not([hidden])');
    expect(await page.textContent('#webhooks-unavailable')).toMatch(/Builder tier/);
    expect(await page.isHidden('#webhooks-body')).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it('made no request to another host, put no key in a URL, and logged no console error', () => {
    const origin = new URL(t.api.url).origin;
    expect(browser.requests.filter((u) => !u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin)).toEqual([]);
    expect(browser.requests.filter((u) => u.includes('afr_live_') || u.includes('whsec_'))).toEqual([]);
    expect(browser.errors).toEqual([]);
  });
});
