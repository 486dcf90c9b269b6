// Requests before bulk work. A request is in the foreground of this process from when it has
// arrived whole until its answer is made (api/middleware/foreground.ts enters, the envelope
// leaves), or until its route says the rest is bulk work; the bulk parts of long answers (the
// statements of a long read after its first, lib/db/long-reads.ts; the text of a streamed page a
// slice at a time) run in the background: each step waits while a request is in the foreground
// and GRACE_MS after, at most MAX_WAIT_MS in all, so another customer's request meets the
// database and this thread as if no long answer were being made, and a long answer still moves on
// under steady traffic. (docs/decisions.md, "Small requests before bulk work".)

/** The longest a background step waits for the foreground to clear. */
export const MAX_WAIT_MS = 20;
/**
 * How long the foreground stays clear before the steps it held go. A customer sending requests
 * one after another (a cursor paged through, a dashboard loading its parts) has its next one here
 * within about a millisecond; a step let go in that gap is a statement the request then waits
 * behind on the embedded database's one connection (anticipatory scheduling: disk schedulers wait
 * as briefly for a reader's next read). Steps asking while the foreground is clear go at once.
 */
export const GRACE_MS = 1;

let inForeground = 0;
const waiting: (() => void)[] = [];
let grace: NodeJS.Timeout | undefined;

function release(): void {
  if (waiting.length === 0 || grace) return; // every request leaves through here: nothing made for nothing
  grace = setTimeout(() => {
    grace = undefined;
    if (inForeground === 0) for (const go of waiting.splice(0)) go();
  }, GRACE_MS);
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
