// Deterministic randomness for the simulated market: every random draw is a pure function of
// (seed, what it is for, where/when), so the same seed and clock always give the same market.

/** 32-bit hash of a list of parts (FNV-1a over their text, then a murmur3 finaliser). */
export function hash32(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  const text = parts.join('\u001f');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A uniform number in [0, 1) determined by the parts. */
export function unit(...parts: Array<string | number>): number {
  return hash32(...parts) / 4294967296;
}

/** Small fast PRNG (mulberry32): a stream of uniforms in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box-Muller). */
export function gaussian(next: () => number): number {
  const u = Math.max(next(), 1e-12);
  const v = next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** A Poisson draw with mean lambda (Knuth for small means, normal approximation above 50). */
export function poisson(next: () => number, lambda: number): number {
  if (lambda <= 0) return 0;
  if (lambda > 50) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * gaussian(next)));
  const limit = Math.exp(-lambda);
  let k = 0;
  let p = next();
  while (p > limit) {
    k++;
    p *= next();
  }
  return k;
}

/**
 * Smooth noise in [-1, 1] over time: random values at knots `period` ms apart, joined by a
 * smoothstep. Summing several periods with amplitudes growing like sqrt(period) gives a path that
 * wanders like a random walk but can be evaluated at any instant without integrating history.
 */
export function valueNoise(t: number, period: number, ...key: Array<string | number>): number {
  const x = t / period;
  const k = Math.floor(x);
  const f = x - k;
  const a = unit(...key, period, k) * 2 - 1;
  const b = unit(...key, period, k + 1) * 2 - 1;
  const s = f * f * (3 - 2 * f);
  return a + (b - a) * s;
}
