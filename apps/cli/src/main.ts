import { buildProgram } from './program.js';

buildProgram()
  .parseAsync(process.argv)
  .catch((err: unknown) => {
    process.stderr.write(`tracehub: ${err instanceof Error ? err.message : `${err}`}\n`);
    process.exit(1);
  });
