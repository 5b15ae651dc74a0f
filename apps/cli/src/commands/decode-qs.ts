import type { Command } from 'commander';

/** Adds the qs-specific options of `tracehub decode`. */
export function addQsDecodeOptions(_cmd: Command): void {}

/** Decodes FILE as qs and writes the records to stdout. */
export async function runQsDecode(_file: string, _opts: Record<string, unknown>): Promise<void> {
  throw new Error('qs decoding is not available in this build');
}
