import { type Command, InvalidArgumentError, Option } from 'commander';

// The options of `tracehub decode --protocol stp|swd`, apart from the decoding itself, which
// the command loads only when it decodes stp or swd.

function parseStpVersion(value: string): 1 | 2 {
  if (value !== '1' && value !== '2') throw new InvalidArgumentError('must be 1 or 2');
  return Number(value) as 1 | 2;
}

/** `0x41,17,0x30` -> [65, 17, 48]. */
function parseMasters(value: string): number[] {
  const masters = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => Number(s));
  if (masters.some((m) => !Number.isInteger(m) || m < 0 || m > 0xffff)) {
    throw new InvalidArgumentError('must be a comma-separated list of masters 0..65535 (decimal or 0x hex)');
  }
  return masters;
}

/** `0x0b` or `11` -> 11: one byte of the output messages. */
function parseByte(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isInteger(n) || n < 0 || n > 0xff) {
    throw new InvalidArgumentError('must be a number 0..255 (decimal or 0x hex)');
  }
  return n;
}

/** Adds the stp-specific options of `tracehub decode`. */
export function addStpDecodeOptions(cmd: Command): void {
  cmd
    .addOption(
      new Option('--stp-version <version>', 'stp: STP version of the stream, 1 or 2 (default 2)').argParser(
        parseStpVersion,
      ),
    )
    .addOption(
      new Option(
        '--little-endian-masters <list>',
        'stp: comma-separated little-endian masters (e.g. 0x21,48)',
      ).argParser(parseMasters),
    )
    .addOption(
      new Option('--output <protocol>', "stp/swd: output protocol whose rules apply (default 'ost')").choices([
        'ost',
        'phonet',
      ]),
    )
    .addOption(
      new Option(
        '--port <byte>',
        'stp/swd: tracebox port / PhoNet sender object of the messages (default 0x0b)',
      ).argParser(parseByte),
    )
    .addOption(
      new Option('--processor <byte>', 'swd: processor index written in the wrapper messages (default 0)').argParser(
        parseByte,
      ),
    )
    .option(
      '--stp-config <file>',
      'stp: JSON capture config (protocol, little_endian_masters, start, max_pause_ms, resync_pause_ms, pauses [{at_byte, ms}], end_of_stream_pause_ms)',
    );
}
