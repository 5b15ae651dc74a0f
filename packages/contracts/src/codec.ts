import type { DecodedRecord } from './decoded-record.js';
import type { ChunkSegment } from './envelopes.js';

/** What the caller knows about a chunk: codecs own no clock and no I/O. */
export interface ChunkContext {
  /** Receive time of the chunk, ns since the Unix epoch. */
  hostNs: bigint;
  /** Bytes known to be lost just before this chunk (the gateway's `th-lost`). */
  lostBytes?: number;
  /**
   * Idle time of the link just before this chunk's first byte, ns (the gateway's
   * `th-pause-ns`). Gateways of timing-sensitive links (STP v1) mark the pauses inside a chunk
   * (`th-segments`) and the chunk is pushed a stretch at a time (`chunkPieces`), so a pause is
   * always before a push. When absent, the difference of `hostNs` stands in.
   */
  pauseNs?: bigint;
}

/**
 * A marker asked for on a live link, in its place in the stream: a user marker with an
 * optional comment (STP: trace box marker 0x02; QS: a note record), or a new time base
 * (STP: output time = receive time + `offsetNs`, with the two 0x03 markers).
 */
export type LinkMarker = { kind: 'user'; comment?: string } | { kind: 'timeBase'; offsetNs: string };

/** What a raw chunk's headers say of its timing (a `RawChunkMeta`, or a stored link chunk). */
export interface ChunkTiming {
  recvNs: bigint;
  lost: number;
  pauseNs?: bigint;
  segments?: readonly ChunkSegment[];
}

/**
 * A chunk as `decoder` takes it: for a decoder that uses pauses, each stretch the link sent
 * without a pause, with its own receive time and the pause before it (the bytes the gateway
 * dropped go with the first); otherwise, and for a chunk without `segments`, one piece.
 */
export function chunkPieces(
  data: Uint8Array,
  chunk: ChunkTiming,
  decoder: Pick<TraceDecoder, 'usesPauses'>,
): Array<{ data: Uint8Array; ctx: ChunkContext }> {
  const first: ChunkContext = { hostNs: chunk.recvNs, lostBytes: chunk.lost };
  if (chunk.pauseNs !== undefined) first.pauseNs = chunk.pauseNs;
  const segments = chunk.segments;
  if (!segments || segments.length < 2 || decoder.usesPauses !== true) return [{ data, ctx: first }];
  return segments.map((s, i) => ({
    data: data.subarray(s.offset, i + 1 < segments.length ? segments[i + 1].offset : data.length),
    ctx: { hostNs: s.recvNs, lostBytes: i === 0 ? chunk.lost : 0, pauseNs: s.pauseNs },
  }));
}

export type EmitRecord = (record: DecodedRecord) => void;

/**
 * A streaming decoder of one link session. `push` accepts chunks cut anywhere and never
 * throws on input; bad bytes become `error` records. `snapshot` returns the whole state as
 * plain JSON, from which the codec's `restore` builds a decoder that continues identically.
 */
export interface TraceDecoder {
  /**
   * True when pauses in the stream change what it decodes (STP v1): a chunk is then pushed a
   * stretch at a time, each after its pause (`chunkPieces`); otherwise whole.
   */
  readonly usesPauses?: boolean;
  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void;
  /** A marker asked for on the live link, after every byte pushed so far (absent: none are kept). */
  mark?(marker: LinkMarker, ctx: ChunkContext, emit: EmitRecord): void;
  /** The session has ended: emit whatever an ending stream completes or abandons. */
  end(ctx: ChunkContext, emit: EmitRecord): void;
  snapshot(): JsonValue;
  /** Counters of what the decoder has seen (frames, records, errors, gaps, skipped bytes...). */
  stats(): Record<string, number>;
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
