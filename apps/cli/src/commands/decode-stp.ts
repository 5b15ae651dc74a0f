import type { Command } from 'commander';

/** Adds the stp-specific options of `tracehub decode`. */
export function addStpDecodeOptions(_cmd: Command): void {}

/** Decodes FILE as stp and writes the records to stdout. */
export async function runStpDecode(_file: string, _opts: Record<string, unknown>): Promise<void> {
  throw new Error('stp decoding is not available in this build');
}
