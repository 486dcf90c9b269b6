// JSON bodies are serialised once, here, so compression (which needs the length) doesn't stringify
// the body a second time just to measure it.
import type Koa from 'koa';
import { HeadAndSharedTail } from './compress.js';

export function serializeJson(ctx: Koa.Context): void {
  const body: unknown = ctx.body;
  if (body !== null && typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof HeadAndSharedTail) && typeof (body as { pipe?: unknown }).pipe !== 'function') {
    ctx.body = JSON.stringify(body);
    ctx.type = 'application/json';
  }
}
