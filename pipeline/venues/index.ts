// Every venue afrates collects from. Adding one: see docs/ADD_VENUE.md.
import { binance } from './binance.js';
import { luno } from './luno.js';
import { quidax } from './quidax.js';
import type { Venue } from './types.js';
import { valr } from './valr.js';

export type { Venue, VenueId, VenueOptions } from './types.js';

export const venues: readonly Venue[] = [luno, binance, valr, quidax];

export function venueById(id: string): Venue | undefined {
  return venues.find((v) => v.id === id);
}
