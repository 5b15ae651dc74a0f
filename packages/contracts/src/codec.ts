import type { DecodedRecord } from './decoded-record.js';

/** What the caller knows about a chunk: codecs own no clock and no I/O. */
export interface ChunkContext {
  /** Receive time of the chunk, ns since the Unix epoch. */
  hostNs: bigint;
  /** Bytes known to be lost just before this chunk (the gateway's `th-lost`). */
  lostBytes?: number;
  /**
   * Idle time of the link just before this chunk's first byte, ns (the gateway's
   * `th-pause-ns`). Gateways of timing-sensitive links (STP v1) cut chunks at pauses, so a
   * pause is always between two chunks. When absent, the difference of `hostNs` stands in.
   */
  pauseNs?: bigint;
}

export type EmitRecord = (record: DecodedRecord) => void;

/**
 * A streaming decoder of one link session. `push` accepts chunks cut anywhere and never
 * throws on input; bad bytes become `error` records. `snapshot` returns the whole state as
 * plain JSON, from which the codec's `restore` builds a decoder that continues identically.
 */
export interface TraceDecoder {
  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void;
  /** The session has ended: emit whatever an ending stream completes or abandons. */
  end(ctx: ChunkContext, emit: EmitRecord): void;
  snapshot(): JsonValue;
  /** Counters of what the decoder has seen (frames, records, errors, gaps, skipped bytes...). */
  stats(): Record<string, number>;
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
