/**
 * Bundles `tracehub decode` (dist/main.js and what it loads for decode: the command, the QS and
 * STP codecs, commander) into dist/bundle/, which bin/tracehub.js runs. A command that decodes a
 * capture in a fraction of a second spends a good part of it starting: forty modules, each
 * resolved, read and linked, made a decode of a 10 kB capture take 0.22 s of CPU against 0.20 s
 * from one bundle (15 alternated runs, apps/cli README).
 *
 * Only the decode path is bundled. The other commands (dist/program.js, loaded by main.js for
 * anything but `decode`) stay as tsc built them: they bring NATS, Postgres and the migrations,
 * which find their files next to their own modules. Packages other than ours and commander are
 * left to node_modules. The decoding threads of `--threads` run dist/bundle/decode-qs-worker.js,
 * next to the chunk that starts them.
 *
 * Run after `tsc` (`npm run build`).
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const dist = fileURLToPath(new URL('../dist/', import.meta.url));

/** What is bundled, what is left out, and commander's node:child_process loaded when used. */
const decodePath = {
  name: 'decode-path',
  setup(b) {
    // commander loads node:child_process at once, for subcommands that are separate executables
    // (tracehub has none); loading it was 4% of the instructions of decoding a 10 kB capture
    // (callgrind: 365 against 351 M). Here it is loaded on first use.
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      args.importer.includes('/node_modules/commander/') ? { path: 'child_process', namespace: 'lazy' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy' }, () => ({
      contents: "module.exports = { spawn: (...args) => require('node:child_process').spawn(...args) };",
      loader: 'js',
    }));
    // Bare imports stay in node_modules, but ours and commander's.
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@tracehub/') || args.path === 'commander') return undefined;
      return { path: args.path, external: true };
    });
    // The whole program (every command but decode) loads from dist/, next to the bundle.
    b.onResolve({ filter: /^\.\/program\.js$/ }, () => ({ path: '../program.js', external: true }));
  },
};

// Chunks are named by their content: those of an earlier build would stay beside the new ones.
rmSync(`${dist}bundle`, { recursive: true, force: true });

await build({
  entryPoints: { main: `${dist}main.js`, 'decode-qs-worker': `${dist}commands/decode-qs-worker.js` },
  outdir: `${dist}bundle`,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  chunkNames: 'chunk-[hash]',
  // commander is CommonJS: its require() of Node's modules needs a require in an ES module.
  banner: {
    js: "import { createRequire as tracehubRequire } from 'node:module'; const require = tracehubRequire(import.meta.url);",
  },
  plugins: [decodePath],
  logLevel: 'warning',
});
