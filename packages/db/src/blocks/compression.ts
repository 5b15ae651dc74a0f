import zlib from 'node:zlib';
import { nodeZstd } from '@tracehub/contracts';

/**
 * How a stored block's bytes are compressed (the `codec` column). zstd where Node has it
 * (22.15 and later), deflate otherwise; a reader decompresses whatever a writer chose.
 */
export enum BlockCodec {
  None = 0,
  Deflate = 1,
  Zstd = 2,
}

/** zstd level 3 (its default): measured on QS records and link bytes, higher levels cost 2-4x the CPU for 3-6 % fewer bytes. */
const ZSTD_LEVEL = 3;

/** The codec this process writes with. */
export const WRITE_CODEC: BlockCodec = nodeZstd ? BlockCodec.Zstd : BlockCodec.Deflate;

/**
 * Compressed with zstd at `level` (default 3; compaction, off the ingest path, uses more),
 * or deflate where Node has no zstd.
 */
export function compressBlock(data: Uint8Array, level?: number): Buffer {
  if (nodeZstd) return nodeZstd.compress(data, level ?? ZSTD_LEVEL);
  return zlib.deflateRawSync(data, { level: 6 });
}

export class BlockCodecError extends Error {
  override name = 'BlockCodecError';
}

export function decompressBlock(codec: number, data: Uint8Array): Buffer {
  switch (codec) {
    case BlockCodec.None:
      return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    case BlockCodec.Deflate:
      return zlib.inflateRawSync(data);
    case BlockCodec.Zstd:
      if (!nodeZstd)
        throw new BlockCodecError(
          `a block is zstd-compressed and Node ${process.version} has no zstd: use Node 22.15 or later`,
        );
      return nodeZstd.decompress(data);
    default:
      throw new BlockCodecError(`unknown block codec ${codec}`);
  }
}
