import type { StpDecoderOptions } from './stp-decoder.js';

/** A pause in an offline capture: `ms` of silence before byte `at_byte` (spec §5.1). */
export interface CapturePause {
  at_byte: number;
  ms: number;
}

/** The `config` object of a reference vector (spec §13), also what `--stp-config` reads. */
export interface StpCaptureConfig {
  protocol?: string;
  little_endian_masters?: number[];
  start?: string;
  max_pause_ms?: number;
  resync_pause_ms?: number;
  pauses?: CapturePause[];
  end_of_stream_pause_ms?: number | null;
}

/** Decoder options from a capture config (the output protocol is chosen separately). */
export function optionsFromCaptureConfig(config: StpCaptureConfig): StpDecoderOptions {
  const version = /v?1$/i.test(config.protocol ?? '') ? 1 : 2;
  const start = config.start ?? '';
  const options: StpDecoderOptions = {
    version,
    littleEndianMasters: config.little_endian_masters ?? [],
    start:
      version === 1
        ? start.startsWith('hot')
          ? 'hot_plug'
          : 'synced'
        : start === 'synced'
          ? 'synced'
          : 'unsynchronised',
    // An offline file ends where its config says; without a closing pause, open messages stay open.
    endOfStreamPauseMs: config.end_of_stream_pause_ms ?? null,
  };
  if (config.max_pause_ms !== undefined) options.maxPauseMs = config.max_pause_ms;
  if (config.resync_pause_ms !== undefined) options.resyncPauseMs = config.resync_pause_ms;
  return options;
}

/** One piece of an offline capture with the synthetic receive time that carries its pauses. */
export interface CapturePiece {
  start: number;
  end: number;
  hostNs: bigint;
}

const NS_PER_MS = 1_000_000;

/**
 * Cuts a capture of `length` bytes into pieces of at most `chunkSize` bytes (or sizes from a
 * function), also cutting at every pause, whose length advances the synthetic host clock:
 * that is how an offline file carries the timing a live link gets from receive times.
 */
export function* capturePieces(
  length: number,
  pauses: readonly CapturePause[] = [],
  chunkSize: number | ((offset: number) => number) = 65536,
  startNs = 0n,
): Generator<CapturePiece> {
  const sorted = [...pauses].sort((a, b) => a.at_byte - b.at_byte);
  let hostNs = startNs;
  let p = 0;
  let offset = 0;
  // A pause before the first byte needs a receive time before it: an empty first piece.
  if (sorted.length > 0 && sorted[0].at_byte === 0) yield { start: 0, end: 0, hostNs };
  while (offset < length) {
    while (p < sorted.length && sorted[p].at_byte <= offset) {
      if (sorted[p].at_byte === offset) hostNs += BigInt(Math.round(sorted[p].ms * NS_PER_MS));
      p++;
    }
    const size = Math.max(1, typeof chunkSize === 'number' ? chunkSize : chunkSize(offset));
    let end = Math.min(length, offset + size);
    if (p < sorted.length && sorted[p].at_byte < end) end = sorted[p].at_byte;
    yield { start: offset, end, hostNs };
    offset = end;
  }
}

/** Host time at the end of a capture (after its last pause inside the file). */
export function captureEndNs(length: number, pauses: readonly CapturePause[] = [], startNs = 0n): bigint {
  let ns = startNs;
  for (const p of pauses) if (p.at_byte <= length) ns += BigInt(Math.round(p.ms * NS_PER_MS));
  return ns;
}
