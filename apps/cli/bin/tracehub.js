#!/usr/bin/env -S node --max-semi-space-size=8
// Committed launcher so that `npm ci` links the `tracehub` bin before the first build.
// A young generation of at most 8 MB semi-spaces (V8 grows it to 16 MB): `decode` of a 402 MB
// STP stream as text then peaks at 90-94 MB instead of 100-102 MB, for no more CPU time, and QS
// decoding runs no slower (packages/stp README).
// The bundle of `npm run build` (scripts/bundle.mjs): `decode` starts from one file.
import('../dist/bundle/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('cli/dist/bundle/main.js')) {
    process.stderr.write('tracehub: the CLI is not built yet: run `npm run build` first\n');
    process.exit(1);
  }
  throw err;
});
