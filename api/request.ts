// What a request carries through the middleware (AppState: its id and its caller), and the Koa
// context and router types built on it. A leaf: what the API's services take from a request, with
// no import of the services themselves (api/context.ts holds those).
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Tier } from '../lib/tiers.js';

/** Who is calling: a key's owner, or a marketplace gateway user. */
export interface Customer {
  /** Stable id for limits and quotas: `key:<customer id>` (a customer's id is its first key's) or `gateway:<user>`. */
  readonly id: string;
  readonly tier: Tier;
  readonly name: string | null;
  /** The key in use and its customer (absent for a gateway user, who has no keys here). */
  readonly keyId?: number;
  readonly customerId?: number;
}

export interface AppState {
  requestId: string;
  customer?: Customer;
  /** The rest of this answer is bulk work (a long read): it leaves the foreground (lib/foreground.ts). */
  leaveForeground: () => void;
}

export type AppContext = Koa.ParameterizedContext<AppState, Router.RouterParamContext<AppState>>;
export type AppRouter = Router<AppState>;
