// What the metrics listener tells an operator when it starts (lib/metrics-server.ts): whether a
// token guards it, in words the log's redaction leaves readable.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/log.js';
import { startMetricsServer } from '../../lib/metrics-server.js';
import { until } from '../support/wait.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-metrics-log-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const source = { contentType: 'text/plain', render: async () => '' };

async function startLine(token: string | undefined): Promise<Record<string, unknown>> {
  const file = path.join(dir, `${token ? 'token' : 'none'}.log`);
  const handle = await startMetricsServer(source, { host: '127.0.0.1', port: 0, token }, createLogger('info', {}, file));
  await handle.close();
  let line: Record<string, unknown> | undefined;
  await until('the start line written', () => {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    line = text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'metrics listening');
    return line !== undefined;
  });
  return line!;
}

describe('the metrics listener starting', () => {
  it('says no token guards it when none is set, never "[redacted]"', async () => {
    const line = await startLine(undefined);
    expect(JSON.stringify(line)).not.toContain('[redacted]');
    expect(line.auth).toBe('none');
  });

  it('says a token guards it when one is set, without the token', async () => {
    const token = 'metrics-test-token-0123456789abcdef';
    const line = await startLine(token);
    expect(JSON.stringify(line)).not.toContain(token);
    expect(line.auth).toBe('bearer token (METRICS_TOKEN)');
  });
});
