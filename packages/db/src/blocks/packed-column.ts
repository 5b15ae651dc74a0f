import type { MachineTallies } from '@tracehub/contracts';
import { BlockCodecError, compressBlock, decompressBlock, WRITE_CODEC } from './compression.js';

/**
 * A summary column that holds something per record (a block's target index, its digest's
 * order) is stored compressed as the blocks' own bytes are, after one byte naming the codec:
 * raw, those columns added half a byte a record to Postgres (docs/scaling.md); compressed, a
 * few hundredths.
 */
export function packColumn(bytes: Uint8Array): Buffer {
  const compressed = compressBlock(bytes);
  const stored = Buffer.allocUnsafe(compressed.length + 1);
  stored[0] = WRITE_CODEC;
  compressed.copy(stored, 1);
  return stored;
}

/** The bytes `packColumn` stored. */
export function unpackColumn(stored: Uint8Array): Buffer {
  if (stored.length < 2) throw new BlockCodecError(`a packed column of ${stored.length} bytes is too short`);
  return decompressBlock(stored[0], stored.subarray(1));
}

/** A block's state-machine tallies (`record_blocks.machines`), stored as packed JSON. */
export function unpackMachines(stored: Uint8Array): MachineTallies {
  return JSON.parse(unpackColumn(stored).toString('utf8')) as MachineTallies;
}
