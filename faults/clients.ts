// What customers see: clients on their own host reading both API processes every second or few,
// each answer recorded with the time it was read (records.jsonl): live rates, candles,
// certificates, fixings, restatements, signed heads, health.
import crypto from 'node:crypto';
import fs from 'node:fs';

export interface Read {
  /** ms when the answer arrived */
  t: number;
  /** which API host */
  api: string;
  route: 'live' | 'candles' | 'certificates' | 'certificate' | 'fixings' | 'restatements' | 'head' | 'health';
  status: number;
  /** 503's Retry-After, or the error's code */
  retryAfter?: string | null;
  error?: string;
  /** live: the newest source time (ms) of any pair; candles: the last candle time */
  newest?: number;
  /** each item of a list: its identity -> a digest of it as served */
  items?: Record<string, string>;
  /** an item's identity listed twice in one answer */
  doubled?: string[];
  head?: { tree_size: number; root_hash: string; timestamp: string };
  health?: { status: string; publisher: number | null; database: string; redis: string };
}

const digest = (v: unknown): string => crypto.createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 24);

export class Clients {
  private readonly out: number;
  private running = true;
  readonly loops: Promise<void>[] = [];
  reads = 0;
  last: Record<string, Read> = {};

  constructor(
    file: string,
    private readonly apis: Record<string, string>,
    private readonly key: string,
    private readonly pairs: string[],
  ) {
    this.out = fs.openSync(file, 'a');
  }

  private record(r: Read): void {
    this.reads++;
    this.last[`${r.route}@${r.api}`] = r;
    fs.writeSync(this.out, JSON.stringify(r) + '\n');
  }

  private async get(api: string, route: Read['route'], url: string, summarise: (body: any) => Partial<Read>): Promise<any> {
    const started = Date.now();
    try {
      const res = await fetch(`${this.apis[api]}${url}`, { headers: { 'X-API-Key': this.key }, signal: AbortSignal.timeout(20_000) });
      const text = await res.text();
      let body: any = undefined;
      try {
        body = JSON.parse(text);
      } catch {
        // not JSON
      }
      const r: Read = { t: Date.now(), api, route, status: res.status };
      if (res.status >= 400) {
        r.retryAfter = res.headers.get('retry-after');
        r.error = body?.error ?? text.slice(0, 80);
      } else if (body !== undefined) Object.assign(r, summarise(body));
      this.record(r);
      return res.status < 400 ? body : undefined;
    } catch (e) {
      // no answer (refused, cut, timed out): 0
      this.record({ t: Date.now(), api, route, status: 0, error: `${(e as Error).name}: ${(e as Error).message}`.slice(0, 120), newest: undefined, ...(Date.now() - started > 19_000 ? { retryAfter: null } : {}) });
      return undefined;
    }
  }

  private loop(everyMs: number, body: (api: string) => Promise<void>): void {
    for (const api of Object.keys(this.apis)) {
      this.loops.push(
        (async () => {
          // bounded: at most a day of reads
          for (let i = 0; i < 86_400_000 / everyMs && this.running; i++) {
            const next = Date.now() + everyMs;
            await body(api).catch(() => {});
            await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
          }
        })(),
      );
    }
  }

  start(): void {
    const pairs = this.pairs.join(',');
    this.loop(1_000, async (api) => {
      await this.get(api, 'live', `/v1/rates/live?pairs=${pairs}`, (b) => {
        let newest = 0;
        for (const rate of Object.values(b.data ?? {}) as any[]) for (const s of rate.sources ?? []) newest = Math.max(newest, Date.parse(s.time));
        return { newest };
      });
    });
    this.loop(2_000, async (api) => {
      await this.get(api, 'head', '/v1/transparency/head', (b) => ({ head: { tree_size: b.tree_size, root_hash: b.root_hash, timestamp: b.timestamp } }));
      await this.get(api, 'health', '/v1/health', (b) => ({
        health: { status: b.status, publisher: b.pipeline?.publisher?.pid ?? null, database: b.services?.database, redis: b.services?.redis },
      }));
    });
    const listed = (key: (x: any) => string, list: (b: any) => any[]) => (b: any) => {
      const items: Record<string, string> = {};
      const doubled: string[] = [];
      for (const x of list(b)) {
        const k = key(x);
        if (items[k] !== undefined) doubled.push(k);
        items[k] = digest(x);
      }
      return { items, ...(doubled.length ? { doubled } : {}) };
    };
    this.loop(5_000, async (api) => {
      const pair = this.pairs[Math.floor(Math.random() * this.pairs.length)]!;
      const day = new Date().toISOString().slice(0, 10);
      await this.get(api, 'candles', `/v1/rates/historical?pair=${pair}&interval=5m&start=${day}&end=${day}&limit=1000`, (b) => {
        const settled = (b.data ?? []).filter((c: any) => c.settled);
        return { newest: Date.parse(b.data?.at(-1)?.time ?? '') || undefined, ...listed((c) => `${pair} ${c.time}`, () => settled)(b) };
      });
      const certs = await this.get(api, 'certificates', `/v1/certificates/${pair}?limit=50`, listed((c) => `${pair} ${c.timestamp}`, (b) => (b.certificates ?? []).map((c: any) => ({ timestamp: c.timestamp, rate: c.rate }))));
      const newest = certs?.certificates?.[0];
      if (newest) {
        await this.get(api, 'certificate', `/v1/certificates/${pair}/${encodeURIComponent(newest.timestamp)}`, (b) => {
          const { meta: _m, customer: _c, ...certificate } = b;
          return { items: { [`${pair} ${newest.timestamp}`]: digest(certificate) } };
        });
      }
      await this.get(api, 'fixings', `/v1/fixings?start=${new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10)}&end=${day}`, listed((f) => f.fixing_id, (b) => (b.fixings ?? []).map(({ restated: _r, restatements_url: _u, ...f }: any) => f)));
      await this.get(api, 'restatements', `/v1/restatements`, listed((r) => String(r.id), (b) => b.restatements ?? []));
    });
  }

  private closed = false;

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    if (!this.closed) fs.closeSync(this.out);
    this.closed = true;
  }
}
