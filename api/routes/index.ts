// Collects the route modules; the order is the order of the OpenAPI document.
import type { RouteModule } from '../operation.js';
import * as auth from './auth.js';
import * as certificates from './certificates.js';
import * as eod from './eod.js';
import * as health from './health.js';
import * as historical from './historical.js';
import * as indices from './indices.js';
import * as live from './live.js';
import * as pairs from './pairs.js';
import * as premium from './premium.js';
import * as spread from './spread.js';
import * as status from './status.js';

export const routeModules: readonly RouteModule[] = [auth, live, historical, eod, spread, premium, indices, pairs, status, health, certificates];
export const operations = routeModules.flatMap((m) => m.operations);
