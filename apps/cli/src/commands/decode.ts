import type { Command } from 'commander';
import { addQsDecodeOptions, runQsDecode } from './decode-qs.js';
import { addStpDecodeOptions, runStpDecode } from './decode-stp.js';

/** `tracehub decode --protocol qs|stp|swd FILE`: offline decode with the same codecs the pipeline runs. */
export function registerDecode(program: Command): void {
  const cmd = program
    .command('decode')
    .description('decode a capture file (or - for stdin) offline and print its records')
    .argument('<file>', 'capture file, or - for standard input')
    .requiredOption('-p, --protocol <protocol>', 'qs | stp | swd')
    .option(
      '-f, --format <format>',
      'output format (qs: text|json; stp: text|json|packets|events|ost-bin|phonet-bin)',
      'text',
    );
  addQsDecodeOptions(cmd);
  addStpDecodeOptions(cmd);
  cmd.action(async (file: string, opts: Record<string, unknown>) => {
    const protocol = String(opts.protocol);
    if (protocol === 'qs') await runQsDecode(file, opts);
    else if (protocol === 'stp' || protocol === 'swd')
      process.exitCode = await runStpDecode(file, { ...opts, protocol });
    else throw new Error(`unknown protocol '${protocol}': use qs, stp or swd`);
  });
}
