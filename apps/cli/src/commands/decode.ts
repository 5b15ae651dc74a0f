import type { Command } from 'commander';
import { addQsDecodeOptions } from './decode-qs-options.js';
import { addStpDecodeOptions } from './decode-stp-options.js';

/**
 * `tracehub decode [--protocol qs|stp|swd] FILE`: offline decode with the same codecs the
 * pipeline runs. Without --protocol, the file's extension or first bytes choose (and a line on
 * stderr says which and why).
 */
export function registerDecode(program: Command): void {
  const cmd = program
    .command('decode')
    .description('decode a capture file (or - for stdin) offline and print its records')
    .argument('<file>', 'capture file, or - for standard input')
    .option(
      '-p, --protocol <protocol>',
      'qs | stp | swd (default: from the extension .qs/.stp/.swd or the first bytes)',
    )
    .option(
      '-f, --format <format>',
      'output format (qs: text|json; stp: text|json|packets|events|ost-bin|phonet-bin)',
      'text',
    );
  addQsDecodeOptions(cmd);
  addStpDecodeOptions(cmd);
  cmd.action(async (file: string, opts: Record<string, unknown>) => {
    let protocol = opts.protocol === undefined ? undefined : String(opts.protocol);
    if (protocol === undefined) {
      if (file === '-')
        throw new Error('decode - reads standard input, whose protocol cannot be told: give -p qs, -p stp or -p swd');
      const { guessProtocol } = await import('./decode-protocol-guess.js');
      const guess = guessProtocol(file);
      if (!guess)
        throw new Error(
          `cannot tell the protocol of ${file} from its name or its first bytes: give -p qs, -p stp or -p swd`,
        );
      process.stderr.write(`decoding ${file} as ${guess.protocol} (from ${guess.from}; -p chooses another)\n`);
      protocol = guess.protocol;
    }
    // Each protocol's decoding is loaded only when asked for: start-up counts for a command
    // that runs for a second, and each codec takes about 12 ms to load.
    if (protocol === 'qs') process.exitCode = await (await import('./decode-qs.js')).runQsDecode(file, opts);
    else if (protocol === 'stp' || protocol === 'swd') {
      process.exitCode = await (await import('./decode-stp.js')).runStpDecode(file, { ...opts, protocol });
    } else throw new Error(`unknown protocol '${protocol}': use qs, stp or swd`);
  });
}
