// The methodology as data (GET /v1/methodology) and as a page (/methodology), without a key: the
// parameters served are the code's, with the settlement lag this service runs with, and every page
// links to the document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { METHODOLOGY_VERSION, PARAMETERS } from '../../lib/methodology/parameters.js';
import { startTestApi, type TestApi } from '../support/api.js';

let t: TestApi;

beforeAll(async () => {
  t = await startTestApi({ hours: 1, env: { SETTLE_AFTER_SECONDS: '600' } });
});
afterAll(async () => {
  await t?.close();
});

describe('GET /v1/methodology', () => {
  it('serves the version and every parameter in force, without a key', async () => {
    const res = await t.get('/v1/methodology');
    expect(res.status).toBe(200);
    expect(res.body.version).toBe(METHODOLOGY_VERSION);
    expect(res.body.document).toBe('/methodology');
    const served = new Map((res.body.parameters as { name: string; value: unknown }[]).map((p) => [p.name, p.value]));
    expect([...served.keys()].sort()).toEqual(Object.keys(PARAMETERS).sort());
    for (const [name, p] of Object.entries(PARAMETERS)) expect(served.get(name), name).toBe(name === 'settle_after_seconds' ? 600 : p.value);
  });

  it('answers an unknown parameter in the error shape', async () => {
    const res = await t.get('/v1/methodology?version=2');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: 'validation_error', status: 400 });
  });
});

describe('the /methodology page', () => {
  it('is the document, with its parameter table, linked from every page', async () => {
    const page = await fetch(`${t.api.url}/methodology`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`Version ${METHODOLOGY_VERSION}`);
    for (const [name, p] of Object.entries(PARAMETERS)) expect(html, name).toMatch(new RegExp(`<code>${name}</code></td>\\s*<td>${String(p.value)}</td>`));
    expect(html).toContain('id="parameters"');
    for (const path of ['/', '/dashboard', '/docs', '/status', '/methodology']) {
      const other = await (await fetch(`${t.api.url}${path}`)).text();
      expect(other, path).toContain('href="/methodology"');
    }
  });
});
