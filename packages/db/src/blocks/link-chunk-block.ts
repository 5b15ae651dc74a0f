import type { ChunkSegment, LinkMarker, RawChunkMeta } from '@tracehub/contracts';

/**
 * The layout of one stored block of link bytes, before compression: a count, one fixed-size
 * entry per raw chunk, then the chunks' bytes back to back.
 *
 * ```
 * u32 count
 * count x { u32 chunk, u32 length, u32 lost, u8 flags (1 eos, 2 pause known, 4 stretches,
 *           8 marker), u8 0, u16 stretches, u64 recvNs, u64 pauseNs }
 * for every chunk, in entry order: its stretches (`stretches` x { u32 offset, u32 0,
 *   u64 pauseNs, u64 recvNs }) when flag 4 is set, its marker (u32 n, then n bytes: the
 *   `th-marker` JSON, UTF-8) when flag 8 is set, then its bytes
 * ```
 * Little-endian throughout. Blocks written before stretches or markers were kept have
 * neither flag 4 nor 8, and read the same.
 */

/**
 * One raw chunk as the gateway published it: what its headers say of it, and its bytes. A
 * marker set on the live link is not link bytes: it is kept with the (empty) chunk that
 * carried it, so that it comes back in its place in the byte stream.
 */
export interface LinkChunk
  extends Pick<RawChunkMeta, 'chunk' | 'recvNs' | 'lost' | 'eos' | 'pauseNs' | 'segments' | 'marker'> {
  data: Uint8Array;
}

/** Bytes of an entry, and of a stretch. */
const SIZE = { entry: 32, stretch: 24 } as const;
/** Bits of an entry's flags byte. */
const FLAG = { eos: 1, pause: 2, stretches: 4, marker: 8 } as const;
/** At most this many stretches a chunk are kept (the count is a u16); the bytes past them go with the last. */
const MAX_STRETCHES = 0xffff;

function stretchesOf(c: LinkChunk): readonly ChunkSegment[] {
  return c.segments && c.segments.length > 1 ? c.segments.slice(0, MAX_STRETCHES) : [];
}

export function encodeLinkChunks(chunks: readonly LinkChunk[]): Buffer {
  let bytes = 0;
  const markers = chunks.map((c) => (c.marker ? Buffer.from(JSON.stringify(c.marker), 'utf8') : null));
  for (const [i, c] of chunks.entries())
    bytes += c.data.length + stretchesOf(c).length * SIZE.stretch + (markers[i] ? 4 + markers[i].length : 0);
  const out = Buffer.alloc(4 + chunks.length * SIZE.entry + bytes);
  out.writeUInt32LE(chunks.length, 0);
  let at = 4;
  let data = 4 + chunks.length * SIZE.entry;
  for (const [i, c] of chunks.entries()) {
    const marker = markers[i];
    out.writeUInt32LE(c.chunk, at);
    out.writeUInt32LE(c.data.length, at + 4);
    out.writeUInt32LE(c.lost, at + 8);
    const stretches = stretchesOf(c);
    out[at + 12] =
      (c.eos ? FLAG.eos : 0) |
      (c.pauseNs !== undefined ? FLAG.pause : 0) |
      (stretches.length > 0 ? FLAG.stretches : 0) |
      (marker ? FLAG.marker : 0);
    out.writeUInt16LE(stretches.length, at + 14);
    out.writeBigUInt64LE(c.recvNs, at + 16);
    out.writeBigUInt64LE(c.pauseNs ?? 0n, at + 24);
    for (const s of stretches) {
      out.writeUInt32LE(s.offset, data);
      out.writeBigUInt64LE(s.pauseNs, data + 8);
      out.writeBigUInt64LE(s.recvNs, data + 16);
      data += SIZE.stretch;
    }
    if (marker) {
      out.writeUInt32LE(marker.length, data);
      out.set(marker, data + 4);
      data += 4 + marker.length;
    }
    out.set(c.data, data);
    data += c.data.length;
    at += SIZE.entry;
  }
  return out;
}

export class BadLinkBlockError extends Error {
  override name = 'BadLinkBlockError';
}

/** The chunks of a block; their `data` are views into `block`. */
export function decodeLinkChunks(block: Buffer): LinkChunk[] {
  if (block.length < 4) throw new BadLinkBlockError('link block shorter than its count');
  const count = block.readUInt32LE(0);
  let at = 4;
  let data = 4 + count * SIZE.entry;
  if (data > block.length)
    throw new BadLinkBlockError(`link block of ${block.length} bytes cannot hold ${count} entries`);
  const chunks: LinkChunk[] = [];
  for (let i = 0; i < count; i++, at += SIZE.entry) {
    const length = block.readUInt32LE(at + 4);
    const flags = block[at + 12];
    const segments: ChunkSegment[] = [];
    if (flags & FLAG.stretches) {
      const stretches = block.readUInt16LE(at + 14);
      if (data + stretches * SIZE.stretch > block.length)
        throw new BadLinkBlockError('link block stretches run past its end');
      for (let k = 0; k < stretches; k++, data += SIZE.stretch)
        segments.push({
          offset: block.readUInt32LE(data),
          pauseNs: block.readBigUInt64LE(data + 8),
          recvNs: block.readBigUInt64LE(data + 16),
        });
    }
    let marker: LinkMarker | undefined;
    if (flags & FLAG.marker) {
      const n = data + 4 <= block.length ? block.readUInt32LE(data) : -1;
      if (n < 0 || data + 4 + n > block.length) throw new BadLinkBlockError('link block marker runs past its end');
      try {
        marker = JSON.parse(block.toString('utf8', data + 4, data + 4 + n)) as LinkMarker;
      } catch {
        throw new BadLinkBlockError('link block marker is not JSON');
      }
      data += 4 + n;
    }
    if (data + length > block.length) throw new BadLinkBlockError('link block entry runs past its end');
    const chunk: LinkChunk = {
      chunk: block.readUInt32LE(at),
      recvNs: block.readBigUInt64LE(at + 16),
      lost: block.readUInt32LE(at + 8),
      eos: (flags & FLAG.eos) !== 0,
      data: block.subarray(data, data + length),
    };
    if (flags & FLAG.pause) chunk.pauseNs = block.readBigUInt64LE(at + 24);
    if (segments.length > 0) chunk.segments = segments;
    if (marker) chunk.marker = marker;
    chunks.push(chunk);
    data += length;
  }
  return chunks;
}
