// The simulated venues' WebSocket streams, as a stream client sees them: each trade arrives once,
// with the same id, time and price/amount text as the venue's REST API gives it; the venues'
// keep-alive and connection rules; and each stream fault.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startSimMarket, type SimMarket, type SimOptions } from '../../sim/index.js';
import { until } from '../support/wait.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

/** A stream client that keeps everything it is sent. */
class Client {
  readonly texts: string[] = [];
  pings = 0;
  pongs = 0;
  opened = false;
  closed: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;

  constructor(url: string, options: WebSocket.ClientOptions = {}) {
    this.ws = new WebSocket(url, options);
    this.ws.on('open', () => (this.opened = true));
    this.ws.on('message', (data) => this.texts.push(data.toString()));
    this.ws.on('ping', () => this.pings++);
    this.ws.on('pong', () => this.pongs++);
    this.ws.on('close', (code, reason) => (this.closed = { code, reason: reason.toString() }));
    this.ws.on('error', () => undefined);
  }

  get messages(): any[] {
    return this.texts.filter((t) => t !== '""').map((t) => JSON.parse(t));
  }

  async open(): Promise<this> {
    await until('the connection to open', () => this.opened || this.closed !== undefined, 5_000);
    if (!this.opened) throw new Error(`closed before opening: ${JSON.stringify(this.closed)}`);
    return this;
  }

  send(value: unknown): void {
    this.ws.send(typeof value === 'string' ? value : JSON.stringify(value));
  }

  /** Waits for a message that matches, sent after the first `from`; returns it. */
  async next(what: string, match: (m: any) => boolean, from = 0, timeoutMs = 5_000): Promise<any> {
    let found: any;
    await until(what, () => (found = this.messages.slice(from).find(match)) !== undefined, timeoutMs);
    return found;
  }

  async closedWith(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    await until('the connection to close', () => this.closed !== undefined, timeoutMs);
    return this.closed!;
  }
}

let sims: SimMarket[] = [];
let clients: Client[] = [];
afterEach(async () => {
  for (const c of clients) c.ws.terminate();
  await Promise.all(sims.map((s) => s.stop()));
  sims = [];
  clients = [];
});

/** A simulator on a clock the test moves (`market.clock`). */
async function market(options: SimOptions = {}): Promise<{ sim: SimMarket; clock: { at: number } }> {
  const clock = { at: T0 };
  const sim = await startSimMarket({ seed: 3, now: () => clock.at, historyStart: T0 - 30 * MINUTE, ...options });
  sims.push(sim);
  return { sim, clock };
}

function client(url: string, options?: WebSocket.ClientOptions): Client {
  const c = new Client(url, options);
  clients.push(c);
  return c;
}

async function getJson(url: string): Promise<any> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return res.json();
}

describe('Binance', () => {
  it('streams each aggTrade once, with the id, time, price and quantity text its REST aggTrades gives', async () => {
    const { sim, clock } = await market();
    const c = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
    clock.at = T0 + 3 * MINUTE;
    const rest = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}&limit=1000`);
    expect(rest.length).toBeGreaterThan(10);
    await until('every trade of the 3 minutes', () => c.messages.length >= rest.length);
    expect(c.messages.map(({ e, E, s, ...row }: any) => row)).toEqual(rest);
    for (const m of c.messages) expect([m.e, m.E, m.s]).toEqual(['aggTrade', clock.at, 'BTCUSDT']);
    // the wire text itself: ids and times integers, price and quantity the REST strings
    expect(c.texts[0]).toMatch(/^\{"e":"aggTrade","E":\d+,"s":"BTCUSDT","a":\d+,"p":"\d+\.\d{8}","q":"\d+\.\d{8}","f":\d+,"l":\d+,"T":\d+,"m":(true|false),"M":true\}$/);

    clock.at = T0 + 5 * MINUTE;
    const all = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}&limit=1000`);
    await until('the next 2 minutes', () => c.messages.length >= all.length);
    expect(c.messages.map((m: any) => m.a)).toEqual(all.map((r: any) => r.a));
  });

  it('subscribes at run time, wraps combined streams as {stream, data} in time order, lists and unsubscribes', async () => {
    const { sim, clock } = await market();
    const c = await client(`${sim.wsUrl}/binance/stream?streams=ethusdt@aggTrade`).open();
    c.send({ method: 'SUBSCRIBE', params: ['btcusdt@aggTrade'], id: 1 });
    expect(await c.next('the SUBSCRIBE answer', (m) => m.id === 1)).toEqual({ result: null, id: 1 });
    c.send({ method: 'LIST_SUBSCRIPTIONS', id: 2 });
    expect(await c.next('the list', (m) => m.id === 2)).toEqual({ result: ['ethusdt@aggTrade', 'btcusdt@aggTrade'], id: 2 });
    const answered = c.messages.length;

    clock.at = T0 + 2 * MINUTE;
    const btc = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}`);
    const eth = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=ETHUSDT&startTime=${T0 + 1}&endTime=${clock.at}`);
    await until('both streams', () => c.messages.length - answered >= btc.length + eth.length);
    const events = c.messages.slice(answered);
    expect(events.every((m: any) => Object.keys(m).join() === 'stream,data')).toBe(true);
    expect(events.filter((m: any) => m.stream === 'btcusdt@aggTrade').map((m: any) => m.data.a)).toEqual(btc.map((r: any) => r.a));
    expect(events.filter((m: any) => m.stream === 'ethusdt@aggTrade').map((m: any) => m.data.a)).toEqual(eth.map((r: any) => r.a));
    const times = events.map((m: any) => m.data.T);
    expect(times).toEqual([...times].sort((a, b) => a - b));

    c.send({ method: 'UNSUBSCRIBE', params: ['ethusdt@aggTrade'], id: 3 });
    expect(await c.next('the UNSUBSCRIBE answer', (m) => m.id === 3)).toEqual({ result: null, id: 3 });
    const before = c.messages.length;
    clock.at = T0 + 4 * MINUTE;
    const more = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 2 * MINUTE + 1}&endTime=${clock.at}`);
    await until('the BTC trades', () => c.messages.length - before >= more.length);
    expect(c.messages.slice(before).map((m: any) => m.stream)).toEqual(more.map(() => 'btcusdt@aggTrade'));

    // a raw connection subscribed at run time gets the events bare; bad requests get the documented errors
    const raw = await client(`${sim.wsUrl}/binance/ws`).open();
    raw.send({ method: 'SUBSCRIBE', params: ['xrpusdt@aggTrade'], id: 7 });
    await raw.next('the answer', (m) => m.id === 7);
    raw.send('{not json');
    expect((await raw.next('the JSON error', (m) => m.code === 3)).msg).toMatch(/^Invalid JSON/);
    raw.send({ method: 'SUBSCRIBE', params: ['XRPUSDT@aggTrade'], id: 8 });
    expect(await raw.next('the stream name error', (m) => m.id === 8)).toEqual({ code: 2, msg: 'Invalid request: invalid stream name', id: 8 });
    raw.send({ method: 'FETCH', id: 9 });
    expect((await raw.next('the method error', (m) => m.id === 9)).code).toBe(2);
    clock.at = T0 + 8 * MINUTE;
    const xrp = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=XRPUSDT&startTime=${T0 + 4 * MINUTE + 1}&endTime=${clock.at}`);
    expect(xrp.length).toBeGreaterThan(0);
    const event = await raw.next('an XRP event', (m) => m.e === 'aggTrade');
    expect(event).toMatchObject({ s: 'XRPUSDT', a: xrp[0].a, T: xrp[0].T, p: xrp[0].p, q: xrp[0].q });
  });

  it('pings, closes a connection that does not pong, and cuts every connection at its lifetime after serverShutdown', async () => {
    const { sim } = await market({ streams: { binancePingMs: 100, binancePongTimeoutMs: 1_000, binanceLifetimeMs: 3_000, binanceShutdownNoticeMs: 1_000 } });
    const answering = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
    const mute = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`, { autoPong: false }).open();
    expect(sim.streamClients('binance')).toBe(2);
    const cut = await mute.closedWith();
    expect(cut.code).toBe(1008);
    expect(mute.pings).toBeGreaterThanOrEqual(1);
    expect(answering.closed).toBeUndefined(); // answering pongs keeps it open past the pong timeout
    await until('the planned cut', () => answering.closed !== undefined, 5_000);
    expect(answering.pings).toBeGreaterThanOrEqual(15);
    expect(answering.closed!.code).toBe(1001);
    expect(answering.messages).toEqual([{ e: 'serverShutdown', E: T0 }]);
    await until('no connection left', () => sim.streamClients('binance') === 0);
  });
});

describe('VALR', () => {
  it('acknowledges each pair, streams NEW_TRADE with the id, time and text of its REST trades, and a new SUBSCRIBE replaces the list', async () => {
    const { sim, clock } = await market();
    const c = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    c.send({ type: 'SUBSCRIBE', subscriptions: [{ event: 'NEW_TRADE', pairs: ['BTCZAR', 'BTCNGN'] }] });
    expect(await c.next('the ack', (m) => m.type === 'SUBSCRIBED')).toEqual({ type: 'SUBSCRIBED', message: 'NEW_TRADE:BTCZAR' });
    expect((await c.next('the error', (m) => m.type === 'ERROR')).message).toMatch(/BTCNGN/);
    c.send({ type: 'PING' });
    await c.next('the PONG', (m) => m.type === 'PONG');
    const before = c.messages.length;

    clock.at = T0 + 4 * MINUTE;
    const rest = (await getJson(`${sim.url}/valr/v1/public/BTCZAR/trades?startTime=${new Date(T0 + 1).toISOString()}&endTime=${new Date(clock.at).toISOString()}`)).reverse();
    expect(rest.length).toBeGreaterThan(5);
    await until('every trade', () => c.messages.length - before >= rest.length);
    const trades = c.messages.slice(before);
    expect(trades.map((m: any) => m.type)).toEqual(rest.map(() => 'NEW_TRADE'));
    expect(trades.map((m: any) => m.currencyPairSymbol)).toEqual(rest.map(() => 'BTCZAR'));
    expect(trades.map((m: any) => m.data)).toEqual(
      rest.map(({ price, quantity, currencyPair, tradedAt, takerSide, id }: any) => ({ price, quantity, currencyPair, tradedAt, takerSide, id })),
    );
    for (const m of trades) for (const v of Object.values(m.data)) expect(typeof v).toBe('string');

    c.send({ type: 'SUBSCRIBE', subscriptions: [{ event: 'NEW_TRADE', pairs: ['ETHZAR'] }] });
    await c.next('the new ack', (m) => m.message === 'NEW_TRADE:ETHZAR');
    const after = c.messages.length;
    clock.at = T0 + 10 * MINUTE;
    const eth = await getJson(`${sim.url}/valr/v1/public/ETHZAR/trades?startTime=${new Date(T0 + 4 * MINUTE + 1).toISOString()}&endTime=${new Date(clock.at).toISOString()}`);
    expect(eth.length).toBeGreaterThan(0);
    await until('the ETHZAR trades', () => c.messages.length - after >= eth.length);
    expect(c.messages.slice(after).map((m: any) => m.currencyPairSymbol)).toEqual(eth.map(() => 'ETHZAR'));
  });

  it('closes a connection that sends nothing, and one without an API key at its lifetime; a keyed one stays', async () => {
    const { sim } = await market({ streams: { valrIdleMs: 1_000, valrKeylessLifetimeMs: 2_000 } });
    const quiet = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    // PING every 100 ms, as a client keeping its connection alive does (every 30 s on the venue)
    const keepAlive = (c: Client): void => {
      const beat = setInterval(() => (c.ws.readyState === WebSocket.OPEN ? c.send({ type: 'PING' }) : clearInterval(beat)), 100);
    };
    const keyless = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    const keyed = await client(`${sim.wsUrl}/valr/ws/trade`, { headers: { 'X-VALR-API-KEY': 'read-only-key', 'X-VALR-TIMESTAMP': String(Date.now()), 'X-VALR-SIGNATURE': 'x' } }).open();
    keepAlive(keyless);
    keepAlive(keyed);
    expect(await quiet.closedWith()).toEqual({ code: 1000, reason: 'idle' });
    expect(keyless.closed).toBeUndefined();
    expect(await keyless.closedWith()).toEqual({ code: 1000, reason: 'session expired' });
    const pongsAtExpiry = keyed.messages.filter((m: any) => m.type === 'PONG').length;
    await until('the keyed connection answered well past the keyless lifetime', () => keyed.messages.filter((m: any) => m.type === 'PONG').length >= pongsAtExpiry + 5);
    expect(keyed.closed).toBeUndefined();
    expect(sim.streamClients('valr')).toBe(1);
  });
});

describe('Luno', () => {
  it('takes credentials first, sends the book, then updates one sequence apart whose trades are the REST trades', async () => {
    const { sim, clock } = await market({ streams: { lunoKeepAliveMs: 100 } });
    const c = await client(`${sim.wsUrl}/luno/api/1/stream/XBTNGN`).open();
    c.send({ api_key_id: 'key', api_key_secret: 'secret' });
    const book = await c.next('the order book', () => true);
    expect(Object.keys(book)).toEqual(['sequence', 'asks', 'bids', 'status', 'timestamp']);
    expect(book).toMatchObject({ status: 'ACTIVE', timestamp: T0 });
    expect(book.sequence).toMatch(/^\d+$/);
    expect(book.asks.length).toBeGreaterThan(0);
    expect(Number(book.asks[0].price)).toBeGreaterThan(Number(book.bids[0].price));
    await until('a keep-alive', () => c.texts.includes('""'));

    clock.at = T0 + 10 * MINUTE;
    const rest = (await getJson(`${sim.url}/luno/api/1/trades?pair=XBTNGN&since=${T0}`)).trades.reverse();
    expect(rest.length).toBeGreaterThan(5);
    const tradesOf = () => c.messages.slice(1).flatMap((m: any) => m.trade_updates ?? []);
    await until('every trade', () => tradesOf().length >= rest.length);
    const updates = c.messages.slice(1);
    expect(updates.map((m: any) => Number(m.sequence))).toEqual(updates.map((_: unknown, i: number) => Number(book.sequence) + 1 + i));
    for (const m of updates) {
      expect(Object.keys(m)).toEqual(['sequence', 'trade_updates', 'create_update', 'delete_update', 'status_update', 'timestamp']);
      expect(typeof m.sequence).toBe('string');
      expect(m.timestamp).toBe(clock.at); // the time the stream sent it, not the trade's
    }
    const trades = tradesOf();
    expect(trades.map((t: any) => t.sequence)).toEqual(rest.map((r: any) => r.sequence));
    expect(trades.map((t: any) => t.base)).toEqual(rest.map((r: any) => r.volume));
    for (const [i, t] of trades.entries()) {
      expect(typeof t.sequence).toBe('number');
      expect(t.counter, `counter of ${t.sequence}`).toBe(product(rest[i].price, t.base));
      expect(t.maker_order_id).toMatch(/^BX[0-9A-Z]{13}$/);
    }
    // the REST trade time is earlier than (or at) the message that carried it
    expect(rest.every((r: any) => r.timestamp <= clock.at)).toBe(true);
  });

  it('closes a connection without credentials in time (auth_timeout), and one with empty credentials', async () => {
    const { sim } = await market({ streams: { lunoAuthTimeoutMs: 200 } });
    const silent = await client(`${sim.wsUrl}/luno/api/1/stream/XBTZAR`).open();
    const empty = await client(`${sim.wsUrl}/luno/api/1/stream/XBTZAR`).open();
    empty.send({ api_key_id: '', api_key_secret: '' });
    expect(await empty.closedWith()).toEqual({ code: 1008, reason: 'invalid credentials' });
    expect(await silent.closedWith()).toEqual({ code: 1008, reason: 'auth_timeout' });
    expect(silent.texts).toEqual([]);
    const unknown = client(`${sim.wsUrl}/luno/api/1/stream/XBTGHS`);
    await until('the refusal', () => unknown.closed !== undefined);
    expect(unknown.opened).toBe(false);
  });
});

/** a x b for decimal strings, exactly, written without trailing fractional zeros. */
function product(a: string, b: string): string {
  const scale = (a.split('.')[1] ?? '').length + (b.split('.')[1] ?? '').length;
  const digits = (BigInt(a.replace('.', '')) * BigInt(b.replace('.', ''))).toString().padStart(scale + 1, '0');
  const frac = digits.slice(digits.length - scale).replace(/0+$/, '');
  const int = digits.slice(0, digits.length - scale);
  return frac ? `${int}.${frac}` : int;
}

describe('stream faults', () => {
  it('stream_drop cuts the open connections and the next ones, then lets them be', async () => {
    const { sim } = await market();
    const a = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    const b = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    const set = await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'valr', kind: 'stream_drop', times: 3 }) });
    expect(await set.json()).toEqual({ ok: true, venue: 'valr', fault: { kind: 'stream_drop', times: 1 } });
    expect((await a.closedWith()).code).toBe(1006); // no close frame
    expect((await b.closedWith()).code).toBe(1006);
    const c = client(`${sim.wsUrl}/valr/ws/trade`);
    expect((await c.closedWith()).code).toBe(1006);
    expect((await getJson(`${sim.url}/_control/fault`)).streams.valr).toBeNull();
    const d = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    d.send({ type: 'PING' });
    await d.next('the PONG', (m) => m.type === 'PONG');
    expect(sim.dropStreams('valr')).toBe(1);
    expect((await d.closedWith()).code).toBe(1006);
    await until('no connection left', () => sim.streamClients('valr') === 0);
    // a stream fault stands beside a request fault; only stream venues have them
    sim.setFault('valr', { kind: 'rate_limit' });
    sim.setFault('valr', { kind: 'stream_gap' });
    const faults = await getJson(`${sim.url}/_control/fault`);
    expect([faults.valr, faults.streams.valr]).toEqual([{ kind: 'rate_limit' }, { kind: 'stream_gap' }]);
    expect((await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'quidax', kind: 'stream_drop' }) })).status).toBe(400);
    expect(() => sim.setFault('coinbase', { kind: 'stream_silent' })).toThrow(/stream fault/);
  });

  it('stream_silent: nothing more is sent, no ping, no answer, yet the connection stays open', async () => {
    const { sim, clock } = await market({ streams: { binancePingMs: 100, binancePongTimeoutMs: 2_000 } });
    const quiet = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
    const res = await fetch(`${sim.url}/_control/fault`, { method: 'POST', body: JSON.stringify({ venue: 'binance', kind: 'stream_silent', times: 1 }) });
    expect(res.status).toBe(200);
    const [texts, pings] = [quiet.texts.length, quiet.pings];
    const witness = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open(); // the fault's one use is spent
    clock.at = T0 + 3 * MINUTE;
    const rest = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}`);
    await until('the witness has every trade', () => witness.messages.length >= rest.length);
    quiet.ws.ping();
    witness.ws.ping();
    await until('the witness answered its ping and was pinged past the pong timeout', () => witness.pongs >= 1 && witness.pings >= 5);
    expect([quiet.texts.length, quiet.pings, quiet.pongs]).toEqual([texts, pings, 0]);
    expect(quiet.closed).toBeUndefined();
    expect(quiet.ws.readyState).toBe(WebSocket.OPEN);
    expect(sim.streamClients('binance')).toBe(2);
    expect(sim.silenceStreams('binance')).toBe(1); // the witness; the quiet one already is
  });

  it('stream_burst holds the trades back, then sends them all at once', async () => {
    const { sim, clock } = await market();
    const binance = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
    const valr = await client(`${sim.wsUrl}/valr/ws/trade`).open();
    valr.send({ type: 'SUBSCRIBE', subscriptions: [{ event: 'NEW_TRADE', pairs: ['BTCZAR'] }] });
    await valr.next('the ack', (m) => m.type === 'SUBSCRIBED');
    sim.setFault('binance', { kind: 'stream_burst' }); // until cleared
    for (let minute = 1; minute <= 4; minute++) {
      clock.at = T0 + minute * MINUTE;
      const zar = await getJson(`${sim.url}/valr/v1/public/BTCZAR/trades?startTime=${new Date(T0 + 1).toISOString()}&endTime=${new Date(clock.at).toISOString()}`);
      // the witness on another venue has its trades of the minute: the stream went on, Binance's held
      await until(`VALR's trades to minute ${minute}`, () => valr.messages.filter((m: any) => m.type === 'NEW_TRADE').length >= zar.length);
      expect(binance.messages).toEqual([]);
    }
    const rest = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}&limit=1000`);
    sim.setFault('binance', null);
    await until('the burst', () => binance.messages.length >= rest.length);
    expect(binance.messages.map((m: any) => m.a)).toEqual(rest.map((r: any) => r.a));
    expect(new Set(binance.messages.map((m: any) => m.E))).toEqual(new Set([clock.at])); // sent together

    // with times: n, the burst goes once n trades are held, and the fault ends
    sim.setFault('binance', { kind: 'stream_burst', times: 10 });
    const sent = binance.messages.length;
    clock.at = T0 + 10 * MINUTE;
    const next = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 4 * MINUTE + 1}&endTime=${clock.at}&limit=1000`);
    expect(next.length).toBeGreaterThanOrEqual(10);
    await until('the second burst', () => binance.messages.length - sent >= next.length);
    expect((await getJson(`${sim.url}/_control/fault`)).streams.binance).toBeNull();
  });

  it('stream_gap on Binance: the trade is missing from the stream (VALR alike), its neighbours are not', async () => {
    const { sim, clock } = await market();
    const binance = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
    sim.setFault('binance', { kind: 'stream_gap', times: 2 });
    clock.at = T0 + 3 * MINUTE;
    const rest = await getJson(`${sim.url}/binance/api/v3/aggTrades?symbol=BTCUSDT&startTime=${T0 + 1}&endTime=${clock.at}`);
    await until('the trades after the gap', () => binance.messages.length >= rest.length - 2);
    expect(binance.messages.map((m: any) => m.a)).toEqual(rest.slice(2).map((r: any) => r.a));
    expect((await getJson(`${sim.url}/_control/fault`)).streams.binance).toBeNull();
  });

  it('stream_gap: a Luno message is lost, its sequence number skipped, its trade only in REST', async () => {
    const { sim, clock } = await market();
    const c = await client(`${sim.wsUrl}/luno/api/1/stream/XBTNGN`).open();
    c.send({ api_key_id: 'key', api_key_secret: 'secret' });
    const book = await c.next('the order book', () => true);
    sim.setFault('luno', { kind: 'stream_gap', times: 1 });
    clock.at = T0 + 10 * MINUTE;
    const rest = (await getJson(`${sim.url}/luno/api/1/trades?pair=XBTNGN&since=${T0}`)).trades.reverse();
    const tradesOf = () => c.messages.slice(1).flatMap((m: any) => m.trade_updates ?? []);
    // every trade but the first, which was lost
    await until('the trades after the gap', () => tradesOf().length >= rest.length - 1);
    expect(tradesOf().map((t: any) => t.sequence)).toEqual(rest.slice(1).map((r: any) => r.sequence));
    const sequences = c.messages.slice(1).map((m: any) => Number(m.sequence));
    const steps = sequences.map((s: number, i: number) => s - (i === 0 ? Number(book.sequence) : sequences[i - 1]!));
    expect(steps.filter((d: number) => d !== 1)).toEqual([2]);
    expect(steps[1]).toBe(2); // the create of the first trade, then its lost fill
  });
});

describe('replay', () => {
  it("streams a replay file's trades with the decimal text the file gave, as the REST APIs do", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'afrates-stream-replay-'));
    try {
      const file = path.join(dir, 'trades.jsonl');
      writeFileSync(
        file,
        [
          '{"venue":"binance","pair":"BTCUSDT","time":"2026-11-20T12:00:01.000Z","id":"900","price":"91234.1","amount":"0.00000001","side":"sell"}',
          '{"venue":"valr","pair":"BTCZAR","time":"2026-11-20T12:00:02.000Z","id":"0196f3a0-0000-7000-8000-000000000001","price":"1700000.5","amount":"0.1","side":"buy"}',
          '{"venue":"luno","pair":"BTCNGN","time":"2026-11-20T12:00:03.000Z","id":"77","price":"152000000.25","amount":"0.0004","side":"buy"}',
        ].join('\n'),
      );
      const clock = { at: T0 };
      const sim = await startSimMarket({ replay: file, now: () => clock.at });
      sims.push(sim);
      const binance = await client(`${sim.wsUrl}/binance/ws/btcusdt@aggTrade`).open();
      const valr = await client(`${sim.wsUrl}/valr/ws/trade`).open();
      valr.send({ type: 'SUBSCRIBE', subscriptions: [{ event: 'NEW_TRADE', pairs: ['BTCZAR'] }] });
      await valr.next('the ack', (m) => m.type === 'SUBSCRIBED');
      const luno = await client(`${sim.wsUrl}/luno/api/1/stream/XBTNGN`).open();
      luno.send({ api_key_id: 'k', api_key_secret: 's' });
      await luno.next('the book', () => true);
      clock.at = T0 + MINUTE;
      expect(await binance.next('the trade', (m) => m.e === 'aggTrade')).toMatchObject({ a: 900, p: '91234.1', q: '0.00000001', T: T0 + 1000, m: true });
      expect((await valr.next('the trade', (m) => m.type === 'NEW_TRADE')).data).toEqual({
        price: '1700000.5',
        quantity: '0.1',
        currencyPair: 'BTCZAR',
        tradedAt: '2026-11-20T12:00:02.000Z',
        takerSide: 'buy',
        id: '0196f3a0-0000-7000-8000-000000000001',
      });
      const fill = (await luno.next('the trade', (m) => Array.isArray(m.trade_updates))).trade_updates[0];
      expect([fill.sequence, fill.base, fill.counter]).toEqual([77, '0.0004', '60800.0001']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
