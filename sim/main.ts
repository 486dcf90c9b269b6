// Runs the simulated market on its own: npx tsx sim/main.ts [--port 4010] [--host 127.0.0.1] [--seed 1] [--replay file.jsonl]
// Prints its URL (point SIM_URL at it) and its streams' ws:// root, and serves until interrupted.
import { parseArgs } from 'node:util';
import { startSimMarket } from './server.js';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '4010' },
    host: { type: 'string', default: '127.0.0.1' },
    seed: { type: 'string', default: '1' },
    replay: { type: 'string' },
    'history-hours': { type: 'string', default: '48' },
  },
});

const port = Number(values.port);
const seed = Number(values.seed);
const hours = Number(values['history-hours']);
if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port: not a port: ${values.port}`);
if (!Number.isInteger(seed)) throw new Error(`--seed: not an integer: ${values.seed}`);
if (!(hours > 0)) throw new Error(`--history-hours: not a positive number: ${values['history-hours']}`);

const sim = await startSimMarket({
  port,
  host: values.host,
  seed,
  replay: values.replay,
  historyStart: Date.now() - hours * 3_600_000,
});
console.log(JSON.stringify({ msg: 'simulated market listening', url: sim.url, ws: sim.wsUrl, mode: values.replay ? 'replay' : 'generated' }));
const shutdown = (): void => {
  void sim.stop().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
