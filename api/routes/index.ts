// Collects the route modules; the order is the order of the OpenAPI document.
import type { RouteModule } from '../operation.js';
import * as account from './account.js';
import * as auth from './auth.js';
import * as board from './board.js';
import * as certificates from './certificates.js';
import * as eod from './eod.js';
import * as fixings from './fixings.js';
import * as exportFiles from './exports.js';
import * as health from './health.js';
import * as historical from './historical.js';
import * as indices from './indices.js';
import * as live from './live.js';
import * as methodology from './methodology.js';
import * as pairs from './pairs.js';
import * as premium from './premium.js';
import * as restatements from './restatements.js';
import * as spread from './spread.js';
import * as status from './status.js';
import * as stream from './stream.js';
import * as transparency from './transparency.js';
import * as webhooks from './webhooks.js';

export const routeModules: readonly RouteModule[] = [auth, live, historical, exportFiles, eod, spread, premium, indices, pairs, status, health, certificates, fixings, restatements, methodology, transparency, stream, account, webhooks, board];
export const operations = routeModules.flatMap((m) => m.operations);
