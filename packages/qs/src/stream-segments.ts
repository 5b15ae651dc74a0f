import type { JsonValue } from '@tracehub/contracts';
import type { QsDecoderOptions } from './config.js';
import { QsDecoder } from './decoder.js';
import type { QsDictionaryFile } from './dictionary-file.js';

/**
 * Cuts one QS stream into segments that decode apart, on other threads, and still give exactly
 * the records of one decoder read end to end. For each segment, in order, `start(segment)`
 * gives the snapshot its decoder begins from; this object skims the segment (deframing, and
 * decoding only the target infos and dictionary records) to know where the next one begins.
 * Wherever a segment boundary falls (inside a frame, an escape or a run of bad frames) the
 * snapshot carries it over. Each segment's decoder counts only its own records, so the
 * counters of the whole stream are the sums.
 */
export class QsStreamSegments {
  private readonly skimmer: QsDecoder;

  constructor(options: QsDecoderOptions = {}, dictionaryFile?: QsDictionaryFile) {
    this.skimmer = new QsDecoder(options, dictionaryFile);
  }

  /** The snapshot the decoder of a segment (the next chunks of the stream) starts from. */
  start(...segment: Uint8Array[]): JsonValue {
    const snapshot = this.skimmer.snapshot() as { [key: string]: JsonValue };
    for (const chunk of segment) this.skimmer.skim(chunk);
    return { ...snapshot, stats: {} };
  }

  /** The decoder of a segment, from the snapshot `start` gave for it. */
  static decoderFor(snapshot: JsonValue, dictionaryFile?: QsDictionaryFile): QsDecoder {
    return QsDecoder.restore(snapshot, undefined, dictionaryFile);
  }
}
