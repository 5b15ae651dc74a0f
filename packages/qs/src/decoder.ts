// Types only: the package root of contracts loads TypeBox (a tenth of a second of start-up).
import type { ChunkContext, DecodedRecord, EmitRecord, JsonValue, LinkMarker, TraceDecoder } from '@tracehub/contracts';
import { BadFrameRun } from './bad-frame-run.js';
import { type QsDecoderOptions, resolveOptions } from './config.js';
import { QS_STATE_RECORD_IDS, QsDecoderRecordId, QsRecordId, QsRecordName } from './constants.js';
import { QsDeframer, QsFrameError, type QsFrameSink } from './deframer.js';
import { formatDictionaryFile, type QsDictionaryFile } from './dictionary-file.js';
import { QsRecordDecoder } from './record-decoder.js';
import { escapeFrame } from './serializer.js';
import type { TextBlocks } from './text-blocks.js';
import { QsTextRecordDecoder } from './text-record-decoder.js';

const EMPTY = new Uint8Array(0);
const SNAPSHOT_VERSION = 1;
const IGNORE: EmitRecord = () => {};

/** QS_STATE_RECORD_IDS by id: the records a skim decodes. */
const STATE_RECORDS: Uint8Array = (() => {
  const ids = new Uint8Array(256);
  for (const id of QS_STATE_RECORD_IDS) ids[id] = 1;
  return ids;
})();

/** Counters of one decoder (TraceDecoder.stats). */
export interface QsDecoderStats {
  /** Bytes pushed. */
  bytes: number;
  /** Frames with a good checksum. */
  frames: number;
  /** Records emitted that are not errors (records, dictionary entries, info). */
  records: number;
  /** Error records emitted. */
  errors: number;
  /** Sequence discontinuities. */
  gaps: number;
  /** Frames missing according to the sequence numbers. */
  lostFrames: number;
  /** Un-escaped bytes of dropped frames (bad checksum, too short, too long, partial). */
  bytesSkipped: number;
  /** Bytes the link reported lost (ChunkContext.lostBytes). */
  linkLostBytes: number;
}

function emptyStats(): QsDecoderStats {
  return { bytes: 0, frames: 0, records: 0, errors: 0, gaps: 0, lostFrames: 0, bytesSkipped: 0, linkLostBytes: 0 };
}

/**
 * QS (QP/Spy) stream decoder of one link session: QSPY's receiver, record decoder and text
 * rendering. Every line QSPY prints belongs to exactly one emitted record's `text`, in order;
 * records QSPY prints nothing for have `text === ''`.
 */
export class QsDecoder implements TraceDecoder, QsFrameSink {
  private readonly options: Required<QsDecoderOptions>;
  private readonly deframer: QsDeframer;
  private records: QsRecordDecoder;
  private readonly dictionaryFile: QsDictionaryFile | undefined;
  private emitFn: EmitRecord = () => {};
  private counters: QsDecoderStats = emptyStats();
  /** The default configuration has been announced (once, before the first record decoded with it). */
  private defaultsAnnounced = false;
  /** Bad frames held back to become one record (leading garbage, stray flags). */
  private readonly badRun = new BadFrameRun();

  /** @param dictionaryFile a qspy `.dic` to decode with, as `qspy -d <file>` does. */
  constructor(options: QsDecoderOptions = {}, dictionaryFile?: QsDictionaryFile) {
    this.options = resolveOptions(options);
    this.deframer = new QsDeframer(this);
    this.dictionaryFile = dictionaryFile;
    this.records = new QsRecordDecoder(this.options, dictionaryFile);
  }

  push(chunk: Uint8Array, ctx: ChunkContext, emit: EmitRecord): void {
    this.emitFn = emit;
    if (ctx.lostBytes !== undefined && ctx.lostBytes > 0) this.linkLost(ctx.lostBytes);
    this.counters.bytes += chunk.length;
    // Records' raw bytes are views made from the chunk's memory (a Buffer's subarray, a Buffer
    // again, costs more to make); the deframer reads a plain Uint8Array view of a Buffer chunk.
    this.chunkBuffer = chunk.buffer;
    this.chunkOffset = chunk.byteOffset;
    this.deframer.push(chunk);
  }

  /**
   * Feeds `chunk` for the state it leaves, as fast as deframing: afterwards `snapshot()` is what
   * it would be after `push(chunk)` (its counters aside), but only the records that change
   * state (STATE_RECORDS) are decoded and nothing is emitted. What comes next can then be
   * decoded by another decoder, restored from that snapshot, while this one skims on: how
   * `tracehub decode` spreads one stream over several threads. The records it does decode
   * (dictionaries, target info) and frame errors go to `emit` when one is given, without `raw`:
   * what a gateway's QS-RX control keeps of a link while nobody waits for its other records.
   */
  skim(chunk: Uint8Array, emit: EmitRecord = IGNORE): void {
    this.skimming = true;
    this.deframer.sendFramesTo(this.leanFrames);
    try {
      this.push(chunk, { hostNs: 0n }, emit);
    } finally {
      this.skimming = false;
      if (!this.textOnly) this.deframer.sendFramesTo(this);
    }
  }

  private skimming = false;
  /**
   * Where the deframer sends frames while skimming or decoding text only: frameLean. The
   * deframer is told where frames go, rather than `frame` asking every time, so that the
   * pipeline's frame path does not pay for the other two.
   */
  private readonly leanFrames: QsFrameSink = {
    frame: (buf, start, len, gapFrom) => this.frameLean(buf, start, len, gapFrom),
    frameError: (error, buf, start, len) => this.frameError(error, buf, start, len),
  };

  /**
   * Set where only the records' text is wanted (`tracehub decode`'s text): records then carry
   * an empty `raw`, a null `targetTs`, empty `fields` and no `qs`, which saves a view or copy
   * of every frame, a bigint of every timestamp and the objects and arrays of every record's
   * fields. Their text, kind, type and name are as ever.
   */
  get textOnly(): boolean {
    return this.records instanceof QsTextRecordDecoder;
  }

  set textOnly(on: boolean) {
    if (on === this.textOnly) return;
    this.useRecordDecoder(
      on
        ? new QsTextRecordDecoder(this.options, this.dictionaryFile)
        : new QsRecordDecoder(this.options, this.dictionaryFile),
    );
  }

  /**
   * Decodes text only (see `textOnly`), writing the lines of the most frequent records straight
   * into `out` as bytes, with no string made for them: those records carry '' as their text.
   * Every other record's text is for the caller to add with `out.line(text)` as the record comes
   * (a record with '' adds nothing), which keeps the lines in stream order.
   */
  textTo(out: TextBlocks): void {
    this.useRecordDecoder(new QsTextRecordDecoder(this.options, this.dictionaryFile, out));
  }

  private useRecordDecoder(next: QsRecordDecoder): void {
    const on = next instanceof QsTextRecordDecoder;
    // The other record decoder takes over the state (configuration, dictionaries) as a checkpoint does.
    next.restore(this.records.snapshot());
    next.hostSeqReset = this.records.hostSeqReset;
    this.records = next;
    this.deframer.sendFramesTo(on || this.skimming ? this.leanFrames : this);
  }

  /** The memory of the chunk being pushed, which frames found in place are views of. */
  private chunkBuffer: ArrayBufferLike = EMPTY.buffer;
  private chunkOffset = 0;

  /**
   * A user marker set on the live link becomes a note record in its place among the target's
   * records (QS has no marker of its own). A time base means nothing to a QS link: ignored.
   */
  mark(marker: LinkMarker, _ctx: ChunkContext, emit: EmitRecord): void {
    if (marker.kind !== 'user') return;
    const comment = marker.comment ?? '';
    emit({
      kind: 'marker',
      type: QsDecoderRecordId.TRACEHUB_NOTE,
      name: 'TRACEHUB_NOTE',
      targetTs: null,
      fields: { comment },
      text: `tracehub note${comment === '' ? '' : ` ${JSON.stringify(comment)}`}`,
      raw: new Uint8Array(0),
    });
  }

  end(_ctx: ChunkContext, emit: EmitRecord): void {
    this.emitFn = emit;
    if (this.badRun.open) this.endBadRun();
    const pending = this.deframer.pending;
    if (pending > 0) {
      const partial = this.deframer.discardPartial();
      this.counters.bytesSkipped += pending;
      // QSPY never sees the end of such a frame, so it prints nothing for it.
      this.error(QsDecoderRecordId.QS_PARTIAL_FRAME, 'QS_PARTIAL_FRAME', '', partial, {
        bytes: pending,
        message: `stream ended inside a frame: ${pending} bytes discarded`,
      });
    }
  }

  /** The configuration in use, and whether it came from a target-info record. */
  get config() {
    return { ...this.records.config, fromTarget: this.records.targetInfoSeen };
  }

  /** The `.dic` text qspy's SAVE_DICT would write now: the configuration and the dictionaries. */
  saveDictionaries(): string {
    return formatDictionaryFile(this.records.config, this.records.dicts);
  }

  stats(): Record<string, number> {
    return { ...this.counters };
  }

  snapshot(): JsonValue {
    return {
      version: SNAPSHOT_VERSION,
      options: { ...this.options },
      deframer: this.deframer.snapshot(),
      records: this.records.snapshot(),
      stats: { ...this.counters },
      defaultsAnnounced: this.defaultsAnnounced,
      badRun: this.badRun.toJSON(),
    };
  }

  /**
   * A decoder for the next session of the same target connection or link: what qspy keeps
   * while a target goes away and comes back (the configuration of its last target info and
   * the dictionaries) from the previous session's snapshot, and nothing of its stream (frame
   * state, sequence, counters). A target info with a reset, or of another build, clears the
   * dictionaries as it would in qspy.
   */
  static continueFrom(previous: JsonValue, options?: QsDecoderOptions, dictionaryFile?: QsDictionaryFile): QsDecoder {
    const s = previous as unknown as { version: number; records: JsonValue };
    if (s === null || typeof s !== 'object' || s.version !== SNAPSHOT_VERSION) {
      throw new Error('not a QsDecoder snapshot (or from an incompatible version)');
    }
    const decoder = new QsDecoder(options, dictionaryFile);
    decoder.records.restore(s.records);
    return decoder;
  }

  /** A decoder that continues exactly where the snapshot was taken (its size options included). */
  static restore(snapshot: JsonValue, options?: QsDecoderOptions, dictionaryFile?: QsDictionaryFile): QsDecoder {
    const s = snapshot as unknown as {
      version: number;
      options: QsDecoderOptions;
      deframer: JsonValue;
      records: JsonValue;
      stats: QsDecoderStats;
      defaultsAnnounced: boolean;
      badRun?: JsonValue;
    };
    if (s === null || typeof s !== 'object' || s.version !== SNAPSHOT_VERSION) {
      throw new Error('not a QsDecoder snapshot (or from an incompatible version)');
    }
    const decoder = new QsDecoder({ ...options, ...s.options }, dictionaryFile);
    decoder.deframer.restore(s.deframer);
    decoder.records.restore(s.records);
    decoder.counters = { ...emptyStats(), ...s.stats };
    decoder.defaultsAnnounced = s.defaultsAnnounced;
    decoder.badRun.load(s.badRun);
    return decoder;
  }

  // QsFrameSink -----------------------------------------------------------------------------

  /** @internal */
  frame(buf: Uint8Array, start: number, len: number, gapFrom: number): void {
    const c = this.counters;
    c.frames++;
    if (this.badRun.open) this.endBadRun();
    // A frame read in place is a view of the caller's chunk, which the decoder never writes;
    // one assembled in the deframer's buffer is copied, as that buffer is reused. The view is
    // made from the buffer, not by subarray, whose species lookup costs more (PERFORMANCE.md).
    const raw = this.deframer.ownsBuffer(buf)
      ? copyBytes(buf, start, len)
      : new Uint8Array(this.chunkBuffer, this.chunkOffset + start, len);
    if (gapFrom >= 0) this.gap(gapFrom, raw[0]);
    // announceDefaultsBefore's test written out: a call here on every frame costs instructions
    // (PERFORMANCE.md, "Counting instructions").
    if (!this.records.targetInfoSeen && !this.defaultsAnnounced) this.announceDefaultsBefore(raw[1]);
    const record = this.records.decode(raw, 0, len, raw);
    if (record.kind === 'error') c.errors++;
    else c.records++;
    this.emitFn(record);
  }

  /** A frame skimmed (only records that set up state decoded), or decoded for its text only (no `raw`). */
  private frameLean(buf: Uint8Array, start: number, len: number, gapFrom: number): void {
    this.counters.frames++;
    if (this.badRun.open) this.endBadRun();
    const id = buf[start + 1];
    if (gapFrom >= 0) this.gap(gapFrom, buf[start]);
    this.announceDefaultsBefore(id);
    if (this.skimming && STATE_RECORDS[id] === 0) return;
    const record = this.records.decode(buf, start, len, EMPTY);
    if (record.kind === 'error') this.counters.errors++;
    else this.counters.records++;
    this.emitFn(record);
  }

  /** Announces the default configuration before the first record decoded with it. */
  private announceDefaultsBefore(id: number): void {
    if (!this.records.targetInfoSeen && !this.defaultsAnnounced && id !== QsRecordId.QS_TARGET_INFO && id !== 0) {
      this.announceDefaults();
    }
  }

  /** @internal */
  frameError(error: QsFrameError, buf: Uint8Array, start: number, len: number): void {
    const raw = copyBytes(buf, start, len);
    this.counters.bytesSkipped += len;
    const seq = this.deframer.lastSeq;
    // Of a frame shorter than 2 bytes QSPY names the record from what its buffer still holds (Q8).
    const id = len >= 2 ? buf[start + 1] : this.deframer.staleRecordId;
    const base = this.records.userBase;
    const predefined = id < base;
    const name = predefined ? this.records.names[id] : `USER+${id - base}`;
    if (error === QsFrameError.BAD_CHECKSUM) {
      // Before the first good frame QSPY drops bad frames silently (a capture started mid-frame).
      const line = this.deframer.justStarted ? '' : `   <COMMS> ERROR    Bad checksum in Rec=${name}(?),Seq=${seq}`;
      if (this.badRun.open && this.badRun.continues(line, len)) {
        this.badRun.add(line, raw);
        return;
      }
      if (this.badRun.open) this.endBadRun();
      if (BadFrameRun.starts(line, len)) {
        this.badRun.add(line, raw);
        return;
      }
      this.error(QsDecoderRecordId.QS_BAD_CHECKSUM, 'QS_BAD_CHECKSUM', line, raw, {
        bytes: len,
        lastSeq: seq,
        message: `bad checksum: frame of ${len} bytes dropped`,
      });
      return;
    }
    if (this.badRun.open) this.endBadRun();
    switch (error) {
      case QsFrameError.TOO_SHORT:
        this.error(
          QsDecoderRecordId.QS_RECORD_TOO_SHORT,
          'QS_RECORD_TOO_SHORT',
          `   <COMMS> ERROR    Record too short at Seq=${seq}(?),Rec=${predefined ? name : `${name}(?)`}`,
          raw,
          { bytes: len, lastSeq: seq, message: `frame of ${len} bytes is too short for a record` },
        );
        return;
      case QsFrameError.TOO_LONG: {
        const rec = predefined ? name : `USER+${String(id - base).padStart(3, ' ')}`;
        this.error(
          QsDecoderRecordId.QS_RECORD_TOO_LONG,
          'QS_RECORD_TOO_LONG',
          `   <COMMS> ERROR    Record too long at Seq=${String(seq).padStart(3, ' ')},Rec=${rec}`,
          raw,
          { bytes: len, lastSeq: seq, message: `frame longer than ${len} bytes: discarded` },
        );
        return;
      }
      default:
        this.error(
          QsDecoderRecordId.QS_RECORD_TOO_LONG,
          'QS_RECORD_TOO_LONG',
          `   <COMMS> ERROR    Record too long at Seq=${seq}(?),Rec=${name}(?)`,
          raw,
          { bytes: len, lastSeq: seq, message: `frame longer than ${len} bytes: discarded` },
        );
    }
  }

  // -----------------------------------------------------------------------------------------

  private gap(lastSeq: number, seq: number): void {
    const expected = (lastSeq + 1) & 0xff;
    const lost = (seq - expected) & 0xff;
    this.counters.gaps++;
    this.counters.lostFrames += lost;
    // QSPY prints (expected - 1) as unsigned: 4294967295 after seq 255 (Q1).
    const shown = expected === 0 ? 4294967295 : expected - 1;
    this.error(QsDecoderRecordId.SEQ_GAP, 'SEQ_GAP', `   <COMMS> ERROR    Discontinuity Seq=${shown}->${seq}`, EMPTY, {
      lost,
      lastSeq,
      seq,
      message: `sequence ${lastSeq} -> ${seq}: ${lost} frames lost`,
    });
  }

  private announceDefaults(): void {
    this.defaultsAnnounced = true;
    const o = this.options;
    this.counters.records++;
    this.emitFn({
      kind: 'info',
      type: QsDecoderRecordId.QS_DEFAULT_CONFIG,
      name: 'QS_DEFAULT_CONFIG',
      targetTs: null,
      fields: {
        ...o,
        message:
          'no target info received yet: decoding with the default sizes (set them with the size options if the target differs)',
      },
      text: '',
      raw: EMPTY,
    });
  }

  /** Emits the held run of bad frames as one record. */
  private endBadRun(): void {
    this.counters.errors++;
    this.emitFn(this.badRun.take());
  }

  private linkLost(lostBytes: number): void {
    if (this.badRun.open) this.endBadRun();
    const partial = this.deframer.discardPartial();
    this.counters.linkLostBytes += lostBytes;
    this.counters.bytesSkipped += partial.length;
    this.error(
      QsDecoderRecordId.LINK_LOST,
      'LINK_LOST',
      `   <LINK-> ERROR    ${lostBytes} bytes lost by the link (partial frame of ${partial.length} bytes dropped)`,
      partial,
      {
        lostBytes,
        partialBytes: partial.length,
        message: `the link lost ${lostBytes} bytes before this chunk; the frame in progress (${partial.length} bytes) was dropped`,
      },
    );
  }

  private error(type: number, name: string, text: string, raw: Uint8Array, fields: Record<string, unknown>): void {
    this.counters.errors++;
    const record: DecodedRecord = { kind: 'error', type, name, targetTs: null, fields, text, raw };
    this.emitFn(record);
  }
}

/** A copy of `buf[start .. start+len)` as a plain Uint8Array (frames are short: a loop beats subarray + set). */
function copyBytes(buf: Uint8Array, start: number, len: number): Uint8Array {
  const out = new Uint8Array(len);
  for (let i = 0; i < len; i++) out[i] = buf[start + i];
  return out;
}

/**
 * The `.dic` text qspy would save after these frames (the target infos and dictionary records
 * of a stored session, in order, each a frame as the link carried it), read with `options`.
 */
export async function dictionaryFileAfter(
  frames: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  options?: QsDecoderOptions,
): Promise<string> {
  const decoder = new QsDecoder(options);
  for await (const frame of frames) decoder.push(frame, { hostNs: 0n }, IGNORE);
  return decoder.saveDictionaries();
}

/** A stored record as far as a dictionary file needs it: its kind, name and frame (unescaped). */
export interface StoredFrameRecord {
  kind: string;
  name: string;
  raw: Uint8Array;
}

/**
 * The `.dic` text qspy would save after a stored session's records (in seq order): its target
 * infos and dictionary records, the frames that make a dictionary file, decoded again with
 * `options` (the link's sizes).
 */
export async function dictionaryFileOfRecords(
  records: AsyncIterable<StoredFrameRecord> | Iterable<StoredFrameRecord>,
  options?: QsDecoderOptions,
): Promise<string> {
  async function* dictionaryFrames() {
    for await (const r of records) {
      if (r.raw.length >= 3 && (r.kind === 'dict' || r.name === QsRecordName.QS_TARGET_INFO)) yield escapeFrame(r.raw);
    }
  }
  return dictionaryFileAfter(dictionaryFrames(), options);
}
