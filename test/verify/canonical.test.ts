// The Python verifier writes canonical JSON byte for byte as the service does (lib/signer.ts
// canonicalJson, over JavaScript's JSON.stringify): numbers of every magnitude in JavaScript's
// shortest form, integers past 2^53 as JavaScript parsed them, strings escaped alike, keys sorted by
// UTF-16 code unit. A signature over a certificate holds only if both write the same bytes.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../lib/signer.js';
import { rng } from '../support/market.js';
import { PYTHON, PYTHON_VERIFIER, requirePythonCryptography } from './support.js';

/** Each JSON text as Python's verifier reads and re-writes it, one per line. */
function pythonCanonical(texts: readonly string[]): string[] {
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(path.dirname(PYTHON_VERIFIER))})`,
    'import afrates_verify as v',
    'for line in sys.stdin.read().split("\\n"):',
    '    if line:',
    '        sys.stdout.buffer.write(v.canonical(json.loads(line)).encode("utf-8") + b"\\n")',
  ].join('\n');
  const run = spawnSync(PYTHON, ['-B', '-c', script], { input: `${texts.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  expect(run.status, run.stderr).toBe(0);
  return run.stdout.split('\n').slice(0, -1);
}

beforeAll(() => requirePythonCryptography());

describe('canonical JSON in Python, as JavaScript writes it', () => {
  it('numbers of every magnitude, sign and kind', () => {
    const random = rng(77);
    const numbers: number[] = [0, -0, 1, -1, 0.1, 0.2, 0.1 + 0.2, 1 / 3, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 1.5e-7, 0.000001234, 5e-324, Number.MAX_VALUE, Number.MIN_VALUE, 100000000, 152000000.5, 0.05, 0.005, 0.875, 1632637.1311];
    for (let i = 0; i < 3000; i++) {
      const magnitude = 10 ** (Math.floor(random() * 60) - 30);
      const x = (random() - 0.5) * 2 * magnitude;
      numbers.push(x, Math.round(x), Number(x.toPrecision(1 + Math.floor(random() * 17))));
    }
    // integer literals JavaScript cannot hold exactly: it writes the double it parsed
    const texts = [...numbers.map((n) => JSON.stringify(n)), '9007199254740993', '-12345678901234567890', '1.0', '1E5', '2.50'];
    const js = texts.map((t) => canonicalJson(JSON.parse(t)));
    const py = pythonCanonical(texts);
    const differ = texts.map((t, i) => [t, js[i], py[i]]).filter(([, a, b]) => a !== b);
    expect(differ).toEqual([]);
  });

  it('strings and keys: escapes, non-ASCII, astral characters, lone surrogates, UTF-16 key order', () => {
    const value = {
      'b': 'quote " backslash \\ slash / tab \t newline \n return \r bell \u0007 nul \u0000 del \u007f',
      'a': 'naïve ₦ ZAR 😀 \u2028 \u2029',
      '\uffff': 'last in code points? no: after the surrogate pair below in UTF-16 order',
      '😀': 'astral key',
      'é': 1,
      'A': [null, true, false, { 'z': 1, 'y': [] }, {}],
      'lone': '\ud800x\udfff',
    };
    const texts = [JSON.stringify(value), JSON.stringify(['\ud83d', 'ok'])];
    expect(pythonCanonical(texts)).toEqual(texts.map((t) => canonicalJson(JSON.parse(t))));
  });
});
