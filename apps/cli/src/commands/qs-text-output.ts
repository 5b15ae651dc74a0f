import type { JsonValue } from '@tracehub/contracts';
import type { DecodedRecord } from '@tracehub/contracts/decoded-record';
import { QsDecoderRecordId, type QsDecoderStats, QsRecordId, QsStreamSegments } from '@tracehub/qs';

/** What the text output notices in passing, for the verdict at the end (see qsDecodeVerdict). */
export interface QsTextSeen {
  lengthErrors: number;
  targetInfos: number;
}

/** The records' qspy text into `output`, one line each (records qspy prints nothing for skipped). */
export function qsTextSink(output: OutputBlocks, seen: QsTextSeen): (r: DecodedRecord) => void {
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
export function decodeSegmentText(segment: QsSegment, output: OutputBlocks): QsSegmentText {
  const seen: QsTextSeen = { lengthErrors: 0, targetInfos: 0 };
  const decoder = QsStreamSegments.decoderFor(segment.snapshot);
  decoder.textOnly = true;
  const sink = qsTextSink(output, seen);
  for (const chunk of segment.chunks) decoder.push(chunk, NO_TIME, sink);
  if (segment.last) decoder.end(NO_TIME, sink);
  return { blocks: output.take(), stats: decoder.stats() as unknown as QsDecoderStats, seen };
}

/**
 * Output bytes in blocks of 256 KiB (text as Latin-1, so that every target byte comes out as
 * qspy wrote it; JSON as UTF-8). Lines are appended to one string a few hundred at a time and
 * each batch is encoded into the current block in one go: encoding costs a call into the
 * runtime, which once per line cost more than decoding the record. Appending (not an array
 * joined) leaves V8 a rope that the encoder copies once, where a join copies it twice: 7% less
 * CPU for `tracehub decode` of the bench capture. A batch is short enough that its lines die
 * young, as the records they come from do. A block the output stream is done with is filled
 * again: a fresh 256 KiB buffer costs its page faults every time.
 */
export class OutputBlocks {
  private static readonly SIZE = 256 * 1024;
  private static readonly BATCH = 256;
  private block: Buffer = Buffer.allocUnsafe(OutputBlocks.SIZE);
  private pos = 0;
  private full: Buffer[] = [];
  /** Blocks written out, to be filled again. */
  private free: Buffer[] = [];
  /** Lines not encoded yet, each with its newline, and how many. */
  private pending = '';
  private pendingLines = 0;

  /**
   * @param reuse whether blocks given back with `recycle` are filled again
   * @param maxFree how many given-back blocks are kept for that
   */
  constructor(
    private readonly encoding: 'latin1' | 'utf8',
    private readonly reuse: boolean,
    private readonly maxFree = 8,
  ) {}

  line(s: string): void {
    this.pending = this.pending + s + '\n';
    if (++this.pendingLines === OutputBlocks.BATCH) this.encodeLines();
  }

  /** The blocks filled so far (the current one included), to be written in order. */
  take(): Buffer[] {
    this.encodeLines();
    this.cut();
    const blocks = this.full;
    this.full = [];
    return blocks;
  }

  /** Gives back a block from `take()` once the output stream is done with it. */
  recycle(block: Uint8Array): void {
    // A block of SIZE owns its ArrayBuffer (Node pools only small buffers).
    if (this.reuse && block.buffer.byteLength === OutputBlocks.SIZE && this.free.length < this.maxFree) {
      this.free.push(Buffer.from(block.buffer, 0, OutputBlocks.SIZE));
    }
  }

  private encodeLines(): void {
    if (this.pendingLines === 0) return;
    const text = this.pending;
    this.pending = '';
    this.pendingLines = 0;
    // Latin-1 is one byte per character; UTF-8 at most three per UTF-16 unit.
    const max = this.encoding === 'latin1' ? text.length : text.length * 3;
    if (this.pos + max > this.block.length) {
      this.cut();
      if (max > this.block.length) this.block = Buffer.allocUnsafe(max);
    }
    this.pos += this.block.write(text, this.pos, this.encoding);
  }

  private cut(): void {
    if (this.pos === 0) return;
    this.full.push(this.block.subarray(0, this.pos));
    this.block = this.free.pop() ?? Buffer.allocUnsafe(OutputBlocks.SIZE);
    this.pos = 0;
  }
}
