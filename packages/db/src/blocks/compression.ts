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
  /**
   * zstd frames of record pieces, each after its length (u32, little-endian): the frames the
   * records travelled in on the bus, stored as they came. Decompressed, the block is the JSON
   * array of the pieces' records (the pieces joined with commas, in brackets), as with `Zstd`.
   */
  ZstdPieces = 3,
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

/** Frames of record pieces as a `ZstdPieces` block: each after its length. */
export function encodePieceFrames(frames: readonly Uint8Array[]): Buffer {
  let size = 0;
  for (const frame of frames) size += 4 + frame.length;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const frame of frames) {
    out.writeUInt32LE(frame.length, at);
    out.set(frame, at + 4);
    at += 4 + frame.length;
  }
  return out;
}

const OPEN = 0x5b;
const COMMA = 0x2c;
const CLOSE = 0x5d;

/** A `ZstdPieces` block as the JSON array of its records. */
function decompressPieceFrames(data: Uint8Array): Buffer {
  if (!nodeZstd)
    throw new BlockCodecError(
      `a block is zstd-compressed and Node ${process.version} has no zstd: use Node 22.15 or later`,
    );
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts: Uint8Array[] = [Buffer.of(OPEN)];
  for (let at = 0; at < view.length; ) {
    if (at + 4 > view.length) throw new BlockCodecError('a block of record pieces is cut short');
    const length = view.readUInt32LE(at);
    if (at + 4 + length > view.length) throw new BlockCodecError('a block of record pieces is cut short');
    const piece = nodeZstd.decompress(view.subarray(at + 4, at + 4 + length));
    if (piece.length > 0) {
      if (parts.length > 1) parts.push(Buffer.of(COMMA));
      parts.push(piece);
    }
    at += 4 + length;
  }
  parts.push(Buffer.of(CLOSE));
  return Buffer.concat(parts);
}

export function decompressBlock(codec: number, data: Uint8Array): Buffer {
  switch (codec) {
    case BlockCodec.ZstdPieces:
      return decompressPieceFrames(data);
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
