// Real Chromium for the browser tests and the web benchmark: Debian's /usr/bin/chromium driven by
// playwright-core (never a downloaded browser), in a new empty profile, with every request and
// every console error recorded so a test can say none went to another host and nothing failed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
// Vitest, when a test run loaded this (it sets VITEST): the web benchmark runs under tsx, where
// importing it throws
const vitest = process.env.VITEST ? await import('vitest') : undefined;

/** Builds web/dist when its sources changed (make decides), so a fresh clone's tests have it. */
export function ensureWebBuilt(): void {
  execFileSync('make', ['-s', 'web'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
}

export interface Browser {
  readonly context: BrowserContext;
  /** Every URL requested, by every page, in order. */
  readonly requests: string[];
  /** Console errors and uncaught page errors, with the page's URL. */
  readonly errors: string[];
  page(width?: number, height?: number): Promise<Page>;
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  const requests: string[] = [];
  const errors: string[] = [];
  context.on('request', (r) => requests.push(r.url()));
  // each error names the test that was running when it came: the last test asserts none came
  const during = () => (vitest ? ` [during: ${vitest.expect.getState().currentTestName ?? 'no test'}]` : '');
  const watch = (page: Page) => {
    page.on('console', (m) => {
      // a refused resource names itself in the message's location, not in its text
      const source = m.location().url;
      if (m.type() === 'error') errors.push(`${page.url()}: ${m.text()}${source && source !== page.url() ? ` (${source})` : ''}${during()}`);
    });
    page.on('pageerror', (e) => errors.push(`${page.url()}: ${e.message}${during()}`));
    page.on('dialog', (d) => void d.accept());
  };
  context.on('page', watch);
  for (const p of context.pages()) watch(p);
  return {
    context,
    requests,
    errors,
    async page(width = 1280, height = 900) {
      const page = await context.newPage();
      await page.setViewportSize({ width, height });
      return page;
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** axe-core's violations on the page (run through the debugging protocol: the page's CSP stays on). */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string | null; nodes: string[] }[]> {
  const source = fs.readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  return page.evaluate(async () => {
    const w = window as unknown as { axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] }> } };
    const result = await w.axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => JSON.stringify(n.target)) }));
  });
}

/** Whether a canvas inside `selector` has anything drawn on it (some pixel differs from the first). */
export async function canvasDrawn(page: Page, selector: string): Promise<boolean> {
  return page.evaluate((sel) => {
    for (const canvas of document.querySelectorAll<HTMLCanvasElement>(`${sel} canvas`)) {
      if (canvas.width === 0 || canvas.height === 0) continue;
      const ctx = canvas.getContext('2d');
      if (!ctx) continue;
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let distinct = 0;
      for (let i = 4; i < data.length; i += 4 * 7) {
        if (data[i] !== data[0] || data[i + 1] !== data[1] || data[i + 2] !== data[2] || data[i + 3] !== data[3]) distinct++;
        if (distinct > 200) return true;
      }
    }
    return false;
  }, selector);
}
