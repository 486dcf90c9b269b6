// A wait with a bound: what a health reading, a replica probe or a metrics scrape does with work
// that may never answer (a hung database).

/** `work`'s result, or a rejection (code ETIMEDOUT) once `ms` have passed without one; the work itself goes on. */
export async function within<T>(ms: number, work: PromiseLike<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error(`no answer within ${ms} ms`), { code: 'ETIMEDOUT' })), ms)));
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
