// Simulated data is never shown as real: the API labels every answer that comes from the simulated
// market (`X-Afrates-Data: simulated`, what make demo runs), and a page that shows data says so at
// the top of its content as soon as one of its answers carries that label.
import { el } from './dom.js';

const NOTE_ID = 'simulated-note';

/** Shows the note when this answer came from the simulated market. */
export function noteMarket(res: Response): void {
  if (res.headers.get('X-Afrates-Data') === 'simulated') showSimulated();
}

function showSimulated(): void {
  if (document.getElementById(NOTE_ID)) return;
  const main = document.getElementById('main');
  if (!main) return;
  main.prepend(
    el(
      'p',
      { id: NOTE_ID, class: 'simulated-note', role: 'note' },
      el('strong', {}, 'Simulated data.'),
      ' This service runs on a simulated market (make demo): no rate, candle or fixing shown here is a real market price.',
    ),
  );
}

/** Asks the API which market it serves, for a page that shows nothing before it is used (the dashboard signed out). */
export async function checkMarket(): Promise<void> {
  try {
    noteMarket(await fetch('/v1/health', { headers: { Accept: 'application/json' }, cache: 'no-store' }));
  } catch {
    /* unreachable: the page says so where it needs the API */
  }
}
