// The parts of ccxt the collector uses: the base Exchange, the errors it throws, its helper
// functions, and the two exchange classes our adapters extend (binance, luno).
//
// `import 'ccxt'` evaluates every one of its ~110 exchanges: ~40 MB of heap for their sources
// alone, and ~80 MB of resident memory, in a process that needs two of them. ccxt's exports map
// offers nothing narrower than the whole, so these are loaded from their own files in the
// installed package (its version is locked; test/pipeline/venues drives each adapter through
// them). Each file is one ES module, so these are the very classes `import 'ccxt'` would give
// (ccxt's index re-exports them): an error from either is `instanceof` the same class.
//
// Import ccxt's types from 'ccxt' itself (`import type`: erased, loads nothing); values from here.
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type * as Ccxt from 'ccxt';

// ccxt's CommonJS entry (dist/ccxt.cjs) is what require can name; the ES modules are beside it
const sources = new URL('../js/src/', pathToFileURL(createRequire(import.meta.url).resolve('ccxt')));

async function load<T>(file: string): Promise<T> {
  return (await import(new URL(file, sources).href)) as T;
}

const [base, errors, helpers, binanceModule, lunoModule] = await Promise.all([
  load<{ Exchange: typeof Ccxt.Exchange }>('base/Exchange.js'),
  load<Pick<typeof Ccxt, 'BadRequest' | 'BadResponse' | 'BadSymbol' | 'ExchangeError' | 'OperationFailed'>>('base/errors.js'),
  load<typeof Ccxt.functions>('base/functions.js'),
  load<{ default: typeof Ccxt.binance }>('binance.js'),
  load<{ default: typeof Ccxt.luno }>('luno.js'),
]);

export const Exchange = base.Exchange;
export type Exchange = Ccxt.Exchange;
export const { BadRequest, BadResponse, BadSymbol, ExchangeError, OperationFailed } = errors;
export const functions = helpers;
export const binance = binanceModule.default;
export const luno = lunoModule.default;
