import type { JsonValue } from '@tracehub/contracts';
import type { DecodedRecord } from '@tracehub/contracts/decoded-record';
import { QsDecoderRecordId, type QsDecoderStats, QsRecordId, QsStreamSegments, type TextBlocks } from '@tracehub/qs';

/** What the text output notices in passing, for the verdict at the end (see qsDecodeVerdict). */
export interface QsTextSeen {
  lengthErrors: number;
  targetInfos: number;
}

/**
 * The records' qspy text into `output`, one line each (records qspy prints nothing for skipped),
 * after the lines their decoder wrote there as bytes (QsDecoder.textTo: those records carry '').
 */
export function qsTextSink(output: TextBlocks, seen: QsTextSeen): (r: DecodedRecord) => void {
  return (r) => {
    if (r.kind !== 'record') noticeQsRecord(r, seen);
    if (r.text !== '') output.line(r.text);
  };
}

/** Counts the records the verdict needs: length errors and target infos. */
export function noticeQsRecord(r: DecodedRecord, seen: QsTextSeen): void {
  if (r.type === QsDecoderRecordId.QS_RECORD_LENGTH) seen.lengthErrors++;
  else if (r.type === QsRecordId.QS_TARGET_INFO) seen.targetInfos++;
}

/** A segment of a stream to decode apart (see QsStreamSegments). */
export interface QsSegment {
  chunks: Uint8Array[];
  /** The decoder state it starts from. */
  snapshot: JsonValue;
  /** Whether it ends the stream. */
  last: boolean;
}

/** A decoded segment: its text as Latin-1 blocks, in order, and what its decoder counted. */
export interface QsSegmentText {
  blocks: Uint8Array[];
  stats: QsDecoderStats;
  seen: QsTextSeen;
  /** Set when the segment failed to decode (a fault of ours: it is reported, not skipped). */
  error?: string;
}

const NO_TIME = { hostNs: 0n };

/** Decodes one segment to qspy's text in `output`'s blocks (taken from it when done). */
export function decodeSegmentText(segment: QsSegment, output: TextBlocks): QsSegmentText {
  const seen: QsTextSeen = { lengthErrors: 0, targetInfos: 0 };
  const decoder = QsStreamSegments.decoderFor(segment.snapshot);
  decoder.textTo(output);
  const sink = qsTextSink(output, seen);
  for (const chunk of segment.chunks) decoder.push(chunk, NO_TIME, sink);
  if (segment.last) decoder.end(NO_TIME, sink);
  return { blocks: output.take(), stats: decoder.stats() as unknown as QsDecoderStats, seen };
}
