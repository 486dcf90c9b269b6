// The month files an API process keeps: bounded by bytes, the least recently used given up first,
// and only a file that flowed whole is kept.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { FileCache } from '../../api/file-cache.js';

const bytes = (n: number, fill = 1) => Buffer.alloc(n, fill);

describe('FileCache', () => {
  it('keeps files up to its size, giving up the least recently used first', () => {
    const cache = new FileCache(300);
    cache.set('a', bytes(100, 1), 'r');
    cache.set('b', bytes(100, 2), 'r');
    cache.set('c', bytes(100, 3), 'r');
    expect(cache.get('a')?.bytes[0]).toBe(1); // a is now the most recently used
    cache.set('d', bytes(100, 4), 'r');
    expect(cache.get('b')).toBeUndefined();
    expect(['a', 'c', 'd'].map((k) => cache.get(k)?.bytes[0])).toEqual([1, 3, 4]);
    expect(cache.size).toEqual({ files: 3, bytes: 300 });
    // a file made again from newer rows takes the old one's place
    cache.set('c', bytes(50, 5), 'r2');
    expect(cache.get('c')).toEqual({ bytes: bytes(50, 5), rows: 'r2' });
    expect(cache.size).toEqual({ files: 3, bytes: 250 });
  });

  it('keeps nothing larger than its size, and nothing at all with size 0', () => {
    const cache = new FileCache(100);
    cache.set('big', bytes(101), 'r');
    expect(cache.get('big')).toBeUndefined();
    const off = new FileCache(0);
    off.set('a', bytes(1), 'r');
    expect(off.size).toEqual({ files: 0, bytes: 0 });
  });

  it('keeps what flowed through its keeper once whole, not a stream that failed', async () => {
    const cache = new FileCache(1_000);
    const sink = () => new Writable({ write: (_c, _e, done) => done() });
    await pipeline(Readable.from([bytes(10, 7), bytes(20, 8)]), cache.keeper('whole', () => 'rows-1'), sink());
    expect(cache.get('whole')).toEqual({ bytes: Buffer.concat([bytes(10, 7), bytes(20, 8)]), rows: 'rows-1' });

    async function* failing() {
      yield bytes(10);
      throw new Error('the database went away');
    }
    await expect(pipeline(Readable.from(failing()), cache.keeper('cut', () => 'r'), sink())).rejects.toThrow('went away');
    expect(cache.get('cut')).toBeUndefined();

    // larger than the cache: passed on whole, not kept
    let passed = 0;
    await pipeline(Readable.from([bytes(600), bytes(600)]), cache.keeper('large', () => 'r'), new Writable({ write: (c: Buffer, _e, done) => ((passed += c.length), done()) }));
    expect(passed).toBe(1_200);
    expect(cache.get('large')).toBeUndefined();
  });
});
