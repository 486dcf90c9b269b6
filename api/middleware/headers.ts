// What every answer says about how it may be handled, stated once: JSON, errors, web pages and
// files, event streams, exports, and the answers api/server.ts gives to requests the app never sees.
//
// - X-Content-Type-Options: nosniff: a browser takes each answer as the type it is sent as (a
//   JSON error echoing a parameter is never run as a script or rendered as a page).
// - Referrer-Policy: no-referrer: a page's address (/dashboard) goes nowhere else.
// - Cache-Control: no-store unless the route says how its answer may be kept (the public board
//   and methodology, certificates, web files, event streams). Answers are made for one key (keys
//   issued, account usage, tier-shaped data) and X-API-Key is not in Vary: no cache may keep them.
// - An error is never kept, whatever its route had said before it failed.
import type Koa from 'koa';

export const NO_STORE = 'no-store';

/** The headers of every answer, before its route adds or overrides the Cache-Control. */
export const ANSWER_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': NO_STORE,
};

/** Sets the headers every answer has (before the route runs: a stream's headers leave with its first event). */
export function setAnswerHeaders(ctx: Koa.Context): void {
  if (ctx.res.headersSent) return;
  for (const name in ANSWER_HEADERS) ctx.res.setHeader(name, ANSWER_HEADERS[name]!);
}

/** An error's answer: never kept. */
export function setErrorHeaders(ctx: Koa.Context): void {
  ctx.set('Cache-Control', NO_STORE);
}
