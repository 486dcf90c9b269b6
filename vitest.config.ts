import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // a migrated embedded database, made once, that each file's database starts from
    globalSetup: ['test/support/global-setup.ts'],
    // *.live.test.ts talk to the real venues: only with LIVE_TESTS=1, where there is internet
    exclude: process.env.LIVE_TESTS === '1' ? ['node_modules/**'] : ['test/**/*.live.test.ts', 'node_modules/**'],
    // Each integration file starts its own embedded database; two cores, so two at a time.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // The code must not depend on the machine's zone (operators run it anywhere): tests run at
    // +05:30, where a local-time slip shows as a wrong hour or day, not silently as UTC.
    env: { TZ: 'Asia/Kolkata' },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits for an event: on a loaded machine a page's sign-in and first stream take
    // longer than vitest's default second, and a poll that passes returns at once anyway.
    expect: { poll: { timeout: 15_000 } },
  },
});
