// Requests before bulk work. A request is in the foreground until its handler has returned (an
// answer from memory, a small page, the start of a long one); the bulk parts of long answers (the
// statements of a long read after its first, the text of a streamed page a slice at a time) run in
// the background: each step waits while a request is in the foreground in this process, at most
// MAX_WAIT_MS, so another customer's request meets the database and this thread as if no long
// answer were being made, and a long answer still moves on under steady traffic.
// (docs/decisions.md, "Small requests before bulk work".)

/** The longest a background step waits for the foreground to clear. */
export const MAX_WAIT_MS = 20;

let inForeground = 0;
const waiting: (() => void)[] = [];

function release(): void {
  for (const go of waiting.splice(0)) go();
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
