#!/usr/bin/env -S node --max-semi-space-size=8 --v8-pool-size=1
// Committed launcher so that `npm ci` links the `tracehub` bin before the first build.
// A young generation of at most 8 MB semi-spaces (V8 grows it to 16 MB): `decode` of a 402 MB
// STP stream as text then peaks at 90-94 MB instead of 100-102 MB, for no more CPU time, and QS
// decoding runs no slower (packages/stp README).
// One V8 platform thread instead of four (they run the optimising compilers and help the GC): on
// two cores, `decode --protocol qs` of the 37 MB bench capture took 0.57 s of CPU and 0.51 s of
// wall time instead of 0.62 and 0.54 s (9 alternated runs; under Node 22 it gains too, less).
// Each thread that compiles has a malloc arena of its own: 8.8 k page faults instead of 9.4-10 k.
// (TurboFan's later tier-up under Node 24 is set by the command once loaded: src/v8-tiering.ts.)
// The bundle of `npm run build` (scripts/bundle.mjs): `decode` starts from one file.
import('../dist/bundle/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('cli/dist/bundle/main.js')) {
    process.stderr.write('tracehub: the CLI is not built yet: run `npm run build` first\n');
    process.exit(1);
  }
  throw err;
});
