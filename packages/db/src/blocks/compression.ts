import zlib from 'node:zlib';

/**
 * How a stored block's bytes are compressed (the `codec` column). zstd where Node has it
 * (22.15 and later), deflate otherwise; a reader decompresses whatever a writer chose.
 */
export enum BlockCodec {
  None = 0,
  Deflate = 1,
  Zstd = 2,
}

interface ZstdZlib {
  zstdCompressSync(data: Uint8Array, options?: { params?: Record<number, number> }): Buffer;
  zstdDecompressSync(data: Uint8Array): Buffer;
  constants: Record<string, number>;
}

const zstd =
  typeof (zlib as unknown as Partial<ZstdZlib>).zstdCompressSync === 'function'
    ? (zlib as unknown as ZstdZlib)
    : undefined;
/** zstd level 3 (its default): measured on QS records and link bytes, higher levels cost 2-4x the CPU for 3-6 % fewer bytes. */
const ZSTD_PARAMS = zstd ? { [zstd.constants.ZSTD_c_compressionLevel]: 3 } : {};

/** The codec this process writes with. */
export const WRITE_CODEC: BlockCodec = zstd ? BlockCodec.Zstd : BlockCodec.Deflate;

/**
 * Compressed with zstd at `level` (default 3; compaction, off the ingest path, uses more),
 * or deflate where Node has no zstd.
 */
export function compressBlock(data: Uint8Array, level?: number): Buffer {
  if (zstd)
    return zstd.zstdCompressSync(data, {
      params: level === undefined ? ZSTD_PARAMS : { [zstd.constants.ZSTD_c_compressionLevel]: level },
    });
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
      if (!zstd)
        throw new BlockCodecError(
          `a block is zstd-compressed and Node ${process.version} has no zstd: use Node 22.15 or later`,
        );
      return zstd.zstdDecompressSync(data);
    default:
      throw new BlockCodecError(`unknown block codec ${codec}`);
  }
}
