// A replay file may give prices and amounts as decimal strings: each simulated venue then sends
// exactly those strings on its wire (no binary float in between), so a test can play exact
// decimals (tiny, huge, with trailing zeros) through the real collectors.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseReplay, startSimMarket, type SimMarket } from '../../sim/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'afrates-replay-decimals-'));
const file = path.join(dir, 'market.jsonl');
const TIME = '2026-11-20T10:00:00.123Z';
const PRICE = '1627000.123456780';
const AMOUNT = '12345678.123456789';
const TINY = '0.00000001';
let sim: SimMarket;

beforeAll(async () => {
  const line = (venue: string, pair: string, id: string, amount: string) => JSON.stringify({ venue, pair, time: TIME, id, price: PRICE, amount, side: 'buy' });
  fs.writeFileSync(
    file,
    [line('luno', 'BTCZAR', '1', AMOUNT), line('binance', 'BTCZAR', '2', TINY), line('valr', 'BTCZAR', '3', AMOUNT), line('quidax', 'BTCNGN', '4', TINY)].join('\n'),
  );
  sim = await startSimMarket({ replay: file, now: () => Date.parse('2026-11-20T10:05:00Z') });
});
afterAll(async () => {
  await sim?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

const body = async (p: string) => {
  const res = await fetch(`${sim.url}${p}`);
  expect(res.status, p).toBe(200);
  return res.text();
};

describe('replayed decimal strings', () => {
  it('reach every venue wire exactly as written', async () => {
    expect(await body('/luno/api/1/trades?pair=XBTZAR')).toContain(`"price":"${PRICE}","volume":"${AMOUNT}"`);
    expect(await body('/binance/api/v3/aggTrades?symbol=BTCZAR')).toContain(`"p":"${PRICE}","q":"${TINY}"`);
    expect(await body('/valr/v1/public/BTCZAR/trades')).toContain(`"price":"${PRICE}","quantity":"${AMOUNT}"`);
    expect(await body('/quidax/api/v1/trades/btcngn')).toContain(`"price":"${PRICE}","base_volume":"${TINY}"`);
  });

  it('must be positive plain decimals', () => {
    const bad = (price: unknown) => () => parseReplay(JSON.stringify({ venue: 'luno', pair: 'BTCZAR', time: TIME, id: '1', price, amount: '1', side: 'buy' }), 'f');
    for (const price of ['1e5', '-1', '0.000', '1,5', ' 1', '.5']) expect(bad(price), price).toThrow(/^f:1: "price" must be a positive number or decimal string/);
    expect(bad('0.5')).not.toThrow();
  });
});
