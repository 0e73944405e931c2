/**
 * ES-module resolution through NODE_PATH, as Lambda's Node.js runtimes give it (Node's own ES
 * loader ignores NODE_PATH): a bare specifier the usual lookup cannot find is looked up in each
 * NODE_PATH directory in turn, which is how a bundle's `import "@sparticuz/chromium"` reaches the
 * layer's `nodejs/node_modules`. Loaded with `--import` by the sandbox (environment.ts), never by
 * the function's own code.
 */
import { registerHooks } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const directories = (process.env.NODE_PATH ?? '').split(':').filter(Boolean);
const isBare = (specifier) => !/^(?:[a-z][a-z0-9+.-]*:|\.{0,2}\/|#)/i.test(specifier);

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !isBare(specifier)) throw error;
      for (const directory of directories) {
        // Resolving from a file inside the directory looks in `<directory>/<specifier>` first (then in the
        // node_modules of its parents, which in the sandbox hold nothing).
        try {
          return nextResolve(specifier, { ...context, parentURL: pathToFileURL(join(directory, '[NODE_PATH]')).href });
        } catch {
          // not in this one
        }
      }
      throw error;
    }
  },
});
