// A namespace import: a named one of an export this Node lacks fails before any line runs.
import * as nodeModule from 'node:module';
import { exitIfNodeTooOld } from '@tracehub/service-kit/node-version';
import type { Command } from 'commander';

// First, before loading anything that needs a newer Node (and fails obscurely on an older one);
// its module imports nothing, so it loads on any Node.
exitIfNodeTooOld();

// Start-up counts for a command that runs for a second: V8 keeps the compiled modules on disk
// (in the temp folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off).
nodeModule.enableCompileCache?.();

/**
 * `tracehub decode` loads its own command only: the others bring the NATS, Postgres and
 * TypeBox modules (a thousand of them, a tenth of a second). Anything else, `--help` included,
 * gets the whole program.
 */
async function program(argv: string[]): Promise<Command> {
  if (argv[2] === 'decode') {
    const [{ rootCommand }, { registerDecode }] = await Promise.all([
      import('./root-command.js'),
      import('./commands/decode.js'),
    ]);
    const root = rootCommand();
    registerDecode(root);
    return root;
  }
  return (await import('./program.js')).buildProgram();
}

program(process.argv)
  .then((root) => root.parseAsync(process.argv))
  .catch((err: unknown) => {
    process.stderr.write(`tracehub: ${err instanceof Error ? err.message : `${err}`}\n`);
    process.exit(1);
  });
