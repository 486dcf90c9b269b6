// Loaded with `node --import`: makes importing ccxt (or a venue adapter) fail loudly, so a test can
// prove an API-only process never loads the collector's code.
import { register } from 'node:module';

register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if (specifier === 'ccxt' || /pipeline\\/(runner|venues|ccxt)|node_modules\\/ccxt\\//.test(specifier)) {
        throw new Error('an API-only process imported ' + specifier);
      }
      return next(specifier, context);
    }`)}`,
);
