#!/usr/bin/env node
// Committed launcher so that `npm ci` links the `tracehub` bin before the first build.
import('../dist/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('cli/dist/main.js')) {
    process.stderr.write('tracehub: the CLI is not built yet: run `npm run build` first\n');
    process.exit(1);
  }
  throw err;
});
