// Requests before bulk work. A request is in the foreground of this process from when it has
// arrived whole until its answer is made (api/middleware/foreground.ts enters, the envelope
// leaves), or until its route says the rest is bulk work; the bulk parts of long answers (the
// statements of a long read after its first, lib/db/long-reads.ts; the text of a streamed page a
// slice at a time) run in the background: each step waits while a request is in the foreground,
// at most MAX_WAIT_MS, so another customer's request meets the database and this thread as if no
// long answer were being made, and a long answer still moves on under steady traffic.
// (docs/decisions.md, "Small requests before bulk work".)

/** The longest a background step waits for the foreground to clear. */
export const MAX_WAIT_MS = 20;

let inForeground = 0;
const waiting: (() => void)[] = [];

function release(): void {
  if (waiting.length > 0) for (const go of waiting.splice(0)) go(); // every request leaves through here: no array made for nothing
}

/** A request enters the foreground; the function returned leaves it (once). */
export function enterForeground(): () => void {
  inForeground++;
  let left = false;
  return () => {
    if (left) return;
    left = true;
    if (--inForeground === 0) release();
  };
}

/** Resolves when no request is in the foreground, or after MAX_WAIT_MS; at once when none is. */
export function backgroundTurn(): Promise<void> {
  if (inForeground === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const at = waiting.indexOf(go);
      if (at >= 0) waiting.splice(at, 1);
      resolve();
    }, MAX_WAIT_MS);
    const go = () => {
      clearTimeout(timer);
      resolve();
    };
    waiting.push(go);
  });
}
