// The simulated market: see server.ts for what it serves and how to drive it.
export { startSimMarket, FAULT_TARGETS, type FxReport, type SimMarket, type SimOptions, type StreamOptions } from './server.js';
export type { Fault, FaultKind, SimTrade } from './types.js';
export { FAULT_KINDS, SIM_VENUES, STREAM_FAULT_KINDS, STREAM_VENUES } from './types.js';
export { LISTINGS } from './catalog.js';
export { parseReplay, loadReplay, ReplayError } from './replay.js';
