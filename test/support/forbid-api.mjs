// Loaded with `node --import`: makes importing any file of the project's api/ fail loudly, so a
// test can prove a pipeline-only process never loads the API's code.
import { register } from 'node:module';
import path from 'node:path';

const api = `${path.resolve(import.meta.dirname, '../../api')}${path.sep}`;

register(
  `data:text/javascript,${encodeURIComponent(`
    import { fileURLToPath } from 'node:url';
    export async function resolve(specifier, context, next) {
      const resolved = await next(specifier, context);
      if (resolved.url.startsWith('file:') && fileURLToPath(resolved.url).startsWith(${JSON.stringify(api)})) {
        throw new Error('a pipeline-only process imported ' + resolved.url);
      }
      return resolved;
    }`)}`,
);
