// How numbers, ages and times read on the pages.

/** Decimals a price is shown with: NGN prices run to nine digits, none there; more for small prices. */
export const rateDigits = (n: number): number => (n >= 1000 ? 0 : n >= 1 ? 2 : 6);

/** The price format of a chart series whose prices are about `n`. */
export function priceFormat(n: number) {
  const precision = rateDigits(n);
  return { type: 'price' as const, precision, minMove: 10 ** -precision };
}

export function rate(n: number): string {
  const digits = rateDigits(n);
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

export function ago(seconds: number): string {
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** 2026-11-22 08:01 UTC */
export function when(iso: string | null): string {
  if (!iso) return 'never';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

export function percent(share: number | null, digits = 2): string {
  return share === null ? 'not yet measured' : `${(share * 100).toFixed(digits)}%`;
}

export function duration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}
