// JSON as the venues write it, big integers included: a bigint in a response body is written as a
// bare integer of any size (VALR's sequenceId is beyond 2^53), which JSON.stringify cannot do.
const BIG = '\u0000bigint:';
const BIG_WRITTEN = /"\\u0000bigint:(-?\d+)"/g;

export function toJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${BIG}${v}` : v));
  return text === undefined ? '' : text.replace(BIG_WRITTEN, '$1');
}
