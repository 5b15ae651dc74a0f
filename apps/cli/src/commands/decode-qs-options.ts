import type { QsDecoderOptions } from '@tracehub/qs';
import { type Command, InvalidArgumentError, Option } from 'commander';

// The options of `tracehub decode --protocol qs`, apart from the decoding itself, which the
// command loads only when it decodes qs.

/** The size overrides of `tracehub decode --protocol qs`, QSPY's -O -F -T -S -E -Q -P -B -C (spec 4.3). */
export const SIZE_OPTIONS: { flag: string; key: keyof QsDecoderOptions; qspy: string; what: string }[] = [
  { flag: 'obj-ptr-size', key: 'objPtrSize', qspy: '-O', what: 'object pointer size' },
  { flag: 'fun-ptr-size', key: 'funPtrSize', qspy: '-F', what: 'function pointer size' },
  { flag: 'time-size', key: 'timeSize', qspy: '-T', what: 'timestamp size' },
  { flag: 'sig-size', key: 'sigSize', qspy: '-S', what: 'signal size' },
  { flag: 'event-size', key: 'eventSize', qspy: '-E', what: 'event-size field size' },
  { flag: 'queue-ctr-size', key: 'queueCtrSize', qspy: '-Q', what: 'event-queue counter size' },
  { flag: 'pool-ctr-size', key: 'poolCtrSize', qspy: '-P', what: 'memory-pool counter size' },
  { flag: 'pool-blk-size', key: 'poolBlkSize', qspy: '-B', what: 'memory-pool block-size size' },
  { flag: 'te-ctr-size', key: 'teCtrSize', qspy: '-C', what: 'time-event counter size' },
];

function parseSize(value: string): number {
  const n = Number(value);
  if (n !== 1 && n !== 2 && n !== 4 && n !== 8) throw new InvalidArgumentError('must be 1, 2, 4 or 8 (bytes)');
  return n;
}

/** `7.4`, `7.4.0` or `740` -> 740 (QSPY's -v takes the dotted form). */
function parseVersion(value: string): number {
  const parts = value.split('.');
  if (/^\d+$/.test(value) && parts.length === 1) return Number(value);
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new InvalidArgumentError('must look like 7.4, 7.4.0 or 740');
  }
  return Number(parts[0]) * 100 + Number(parts[1]) * 10 + Number(parts[2] ?? 0);
}

/** Adds the qs-specific options of `tracehub decode`. */
export function addQsDecodeOptions(cmd: Command): void {
  for (const o of SIZE_OPTIONS) {
    cmd.addOption(
      new Option(`--${o.flag} <bytes>`, `qs: ${o.what} until the target info arrives (qspy ${o.qspy})`).argParser(
        parseSize,
      ),
    );
  }
  cmd.addOption(
    new Option(
      '--qs-version <version>',
      'qs: QS version until the target info arrives, e.g. 7.4 or 8.1 (qspy -v; default 7.0): 7.x prints as qspy 7.4, 8.x as qspy 8.1.3',
    ).argParser(parseVersion),
  );
  cmd.addOption(
    new Option(
      '-d, --dictionaries <file>',
      "qs: a qspy .dic file (qspy -d): its configuration and names from the start, its names again after each target info of the file's build",
    ),
  );
  cmd.addOption(
    new Option(
      '--threads <n>',
      'qs text: threads that decode, this one included (default 1; at most one a core and one a MiB of the file; more shortens the wall time where cores are idle, at more CPU time)',
    ).argParser(parseCount),
  );
  // Segments far smaller than the default cut a small capture in many places (tests).
  cmd.addOption(new Option('--segment-bytes <bytes>').argParser(parseCount).hideHelp());
}

function parseCount(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number, 1 or more');
  return n;
}
