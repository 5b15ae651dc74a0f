import type { DecodedRecord } from '@tracehub/contracts';
import type { QsDecoderOptions } from './config.js';
import type { QsKey } from './dictionaries.js';
import type { QsDictionaryFile } from './dictionary-file.js';
import type { PieceMemo } from './format.js';
import type { LineParts } from './line-parts.js';
import { type Fields, NO_FIELDS } from './record-context.js';
import { QsRecordDecoder } from './record-decoder.js';
import { SameFrameLines, timeBytesOf } from './same-frame-lines.js';
import type { TextBlocks } from './text-blocks.js';
import { USER_LINE_ROOM, writeUserElements } from './user-record.js';

/** Lines kept by `lineAgain`, direct-mapped by a hash of their parts and values (a power of two). */
const LINE_SLOTS = 4096;
/** Values a kept line is known by (`lineAgain`'s k0..k5). */
const LINE_KEYS = 6;
/** Room for a kept line (without its timestamp and newline); longer lines are not kept. */
const LINE_ROOM = 256;
/** Room for a timestamp (20 digits at most) and a newline around a line's kept tail. */
const TIMESTAMP_ROOM = 24;
/** User frames of one record id decoded in a window (see userFramesDecoded). */
const USER_WINDOW = 4096;
/** Room for a time event's two counters after its kept part. */
const COUNTERS_ROOM = 48;

/**
 * The record decoder where only the records' text is wanted (`tracehub decode`'s text): the
 * records carry a null `targetTs`, empty `fields` and no `qs`, which saves a bigint of every
 * timestamp and the objects and arrays of every record's fields. A class of its own, so that the
 * pipeline's decoder, which never meets one, pays no test per record for it.
 *
 * Given `out`, it writes the lines of the records printed as a timestamp and the rest (most of
 * the parsers: those of the most frequent records, dispatches, posts, transitions, state entries
 * and exits, time events, pool and event records, as their LineParts and values, with no string
 * made) and of user records of integers, floats and strings straight into `out` as Latin-1
 * bytes, and those records carry '' as their text; every other record's text is a string as
 * ever, for the caller to add to `out` (`out.line`) when it gets the record, which keeps the
 * lines in order. A hook that writes a line is always followed by the parser's `done`, which
 * keeps or takes back the line. The bytes are the string formatter's text exactly: tests
 * compare the two on every capture and on fuzzed streams.
 */
export class QsTextRecordDecoder extends QsRecordDecoder {
  /** Where the line written as bytes for the record being decoded starts; -1 when none was. */
  private lineStart = -1;
  /**
   * The records whose line was written, by id: they differ in nothing else but their kind and
   * name, so one frozen record an id is shared by all of them, rather than one made for every line.
   */
  private readonly writtenRecords: (DecodedRecord | undefined)[] = new Array<DecodedRecord | undefined>(256).fill(
    undefined,
  );

  /**
   * Recent lines (without their timestamp), by their parts and values: a QP application prints
   * the same few lines over and over (the same objects, signals and states), though seldom the
   * same line twice in a row. A line found again is copied from its bytes, its values not even
   * looked up. Each slot holds the last line that hashed to it, known by its parts, its values
   * and the state of the dictionaries and configuration when it was written (`RenderStates`).
   */
  private readonly lineParts: (LineParts | undefined)[] = new Array<LineParts | undefined>(LINE_SLOTS).fill(undefined);
  private readonly lineKeys = new Float64Array(LINE_SLOTS * LINE_KEYS);
  private readonly lineStamps = new Float64Array(LINE_SLOTS);
  /**
   * Each slot's line in LINE_ROOM bytes of one buffer, copied in and out four bytes at a time,
   * with no allocation (a Uint8Array per line kept, most of them off V8's heap, cost more than
   * the line's lookups when lines seldom came again).
   */
  private readonly lineWords = new Int32Array((LINE_SLOTS * LINE_ROOM) / 4);
  private readonly lineLengths = new Uint16Array(LINE_SLOTS);
  /** Frames whose line is in a slot, found again by their bytes before any parser runs. */
  private readonly sameFrames = new SameFrameLines();
  /**
   * The slot the line of the record being decoded was found in by its values (else -1), and its
   * timestamp: its frame is then kept by its bytes. A line seen once is not: most frames that
   * come once never come again, and would push out those that do.
   */
  private lineSlot = -1;
  /** (In a Float64Array for the reason given at SameFrameLines.time.) */
  private readonly lineT = new Float64Array(1);
  /**
   * Where the line of the user record being decoded continues after its timestamp in `out`, and
   * its length without the newline (else -1): its frame is then kept by its bytes the second time
   * it comes (a user line is not looked up by its values), through `userWords`.
   */
  private userTail = -1;
  private userTailLength = 0;
  private readonly userWords = new Int32Array(LINE_ROOM / 4);
  /**
   * User frames decoded (not found by their bytes) and found, by record id, in windows of
   * USER_WINDOW decoded: a record whose values change from frame to frame (a counter, as in
   * big_stress) is given up (`userGivenUp`) after a window where fewer than a quarter as many
   * were found, so that neither keeping nor looking up its frames costs anything from then on
   * (looking each one up cost big_stress 6-8%).
   */
  private readonly userFramesDecoded = new Uint32Array(256);
  private readonly userFramesFound = new Uint32Array(256);
  private readonly userGivenUp = new Uint8Array(256);
  /** The slot the record being decoded was not found in, and its parts: its line goes there once written. */
  private missedSlot = -1;
  private missedParts: LineParts | undefined;
  /** Where the line being written continues after its timestamp (see beginLine). */
  private tailStart = 0;

  constructor(
    options: Required<QsDecoderOptions>,
    dictionaryFile?: QsDictionaryFile,
    private readonly out?: TextBlocks,
  ) {
    super(options, dictionaryFile);
  }

  override decode(buf: Uint8Array, start: number, len: number, raw: Uint8Array): DecodedRecord {
    // Small, so that it stays inlined where frames are handed over. The line of a frame found is
    // written by a call of its own, which TurboFan inlines only as often as frames are found:
    // where few are, the budget goes to the parser's path.
    const out = this.out;
    if (out !== undefined) {
      const lineAt = this.sameFrames.find(buf, start, len, this.renderStates.state, this.configChanges);
      if (lineAt >= 0) return this.sameFrameLine(out, lineAt, buf[start + 1], raw);
    }
    this.missedSlot = -1;
    this.lineSlot = -1;
    this.userTail = -1;
    const record = super.decode(buf, start, len, raw);
    // One call for both kinds of line, as small as the one it replaced: what TurboFan inlines
    // here is taken from the budget of the deframer's loop, which inlines this method.
    if ((this.lineSlot >= 0 || this.userTail >= 0) && this.sameFrames.keeping) this.keepFrame(buf, start, len);
    return record;
  }

  /**
   * The record of a frame found by its bytes, its line written from word `lineAt` of the frames'
   * rows: a `record`, as every parser that asks `lineAgain` makes.
   */
  private sameFrameLine(out: TextBlocks, lineAt: number, id: number, raw: Uint8Array): DecodedRecord {
    const frames = this.sameFrames;
    this.beginLine(out, LINE_ROOM, frames.time[0]);
    out.copyWords(frames.rows, lineAt, frames.lineLength);
    out.endLine();
    this.lineStart = -1;
    if (id < this.userBase) return this.written(id, 'record', this.names[id], raw);
    this.userFramesFound[id]++;
    // A user record's name is its dictionary's: the same while the stamp is (RenderStates).
    return this.written(id, 'record', this.userNameOf(id), raw);
  }

  /** Keeps the frame of the user record just written by its bytes, with its line. */
  private keepUserFrame(buf: Uint8Array, start: number, len: number): void {
    const out = this.out;
    const length = this.userTailLength;
    const timeSize = this.config.timeSize;
    // A user record's payload starts with its timestamp (`user` reads it first).
    if (out === undefined || length > LINE_ROOM || timeSize === 0) return;
    const id = buf[start + 1];
    if (this.userGivenUp[id] !== 0) return;
    const decoded = this.userFramesDecoded[id] + 1;
    if (decoded === USER_WINDOW) {
      const worth = this.userFramesFound[id] * 4 >= decoded;
      this.userFramesDecoded[id] = 0;
      this.userFramesFound[id] = 0;
      if (!worth) {
        this.userGivenUp[id] = 1;
        this.sameFrames.stopKeeping(id);
        return;
      }
    } else {
      this.userFramesDecoded[id] = decoded;
    }
    if (!this.sameFrames.seenBefore(buf, start, len, timeSize)) return;
    out.keepWords(this.userTail, length, this.userWords, 0);
    this.sameFrames.keep(
      buf,
      start,
      len,
      timeSize,
      this.renderStates.state,
      this.configChanges,
      this.userWords,
      0,
      length,
    );
  }

  /** Keeps the frame just decoded by its bytes, with the line it was found to print by its values. */
  private keepFrame(buf: Uint8Array, start: number, len: number): void {
    const line = this.lineSlot;
    if (line < 0) {
      this.keepUserFrame(buf, start, len);
      return;
    }
    const lineAt = line * (LINE_ROOM / 4);
    this.sameFrames.keep(
      buf,
      start,
      len,
      // Checked here: a timestamp past 2^31 handed to a call that is not inlined is boxed.
      timeBytesOf(this.r, buf, start, len, this.lineT[0], this.config.timeSize),
      this.renderStates.state,
      this.configChanges,
      this.lineWords,
      lineAt,
      this.lineLengths[line],
    );
  }

  override lineAgain(
    t: number,
    parts: LineParts,
    k0: QsKey,
    k1: QsKey,
    k2: QsKey,
    k3: number,
    k4: number,
    k5: number,
  ): boolean {
    const out = this.out;
    // Addresses past 2^53 are strings: never kept.
    if (out === undefined || typeof k0 !== 'number' || typeof k1 !== 'number' || typeof k2 !== 'number') return false;
    let h = Math.imul(parts.id ^ k0, 0x9e3779b1);
    h = Math.imul(h ^ k1, 0x85ebca6b);
    h = Math.imul(h ^ k2, 0xc2b2ae35);
    h = Math.imul(h ^ k3 ^ (k4 << 11) ^ (k5 << 22), 0x27d4eb2f);
    const slot = (h ^ (h >>> 15)) & (LINE_SLOTS - 1);
    const keys = this.lineKeys;
    const at = slot * LINE_KEYS;
    const stamp = this.renderStates.state;
    if (
      this.lineParts[slot] === parts &&
      this.lineStamps[slot] === stamp &&
      keys[at] === k0 &&
      keys[at + 1] === k1 &&
      keys[at + 2] === k2 &&
      keys[at + 3] === k3 &&
      keys[at + 4] === k4 &&
      keys[at + 5] === k5
    ) {
      this.beginLine(out, LINE_ROOM, t);
      out.copyWords(this.lineWords, slot * (LINE_ROOM / 4), this.lineLengths[slot]);
      out.endLine();
      this.lineSlot = slot;
      this.lineT[0] = t;
      return true;
    }
    // Not there: the slot is this line's from now on, its bytes kept once written (by `done`).
    this.lineParts[slot] = undefined;
    keys[at] = k0;
    keys[at + 1] = k1;
    keys[at + 2] = k2;
    keys[at + 3] = k3;
    keys[at + 4] = k4;
    keys[at + 5] = k5;
    this.lineStamps[slot] = stamp;
    this.missedSlot = slot;
    this.missedParts = parts;
    return false;
  }

  /**
   * Records without `fields` and `qs`: where this is inlined into a record's parser, the objects
   * the parser builds for them are never used, and the compiler leaves them out (so the rest is
   * kept out of line, to stay small enough to be inlined).
   */
  override done(
    id: number,
    kind: DecodedRecord['kind'],
    _t: number | null,
    text: string,
    _fields: Fields,
    raw: Uint8Array,
  ): DecodedRecord {
    if (this.lineStart >= 0 || this.r.remaining !== 0) return this.doneWritten(id, kind, raw);
    return { kind, type: id, name: this.names[id], targetTs: null, fields: NO_FIELDS, text, raw };
  }

  /**
   * `done` of a record whose line was written as bytes, or that failed its length check: that
   * takes back the line written for it.
   */
  private doneWritten(id: number, kind: DecodedRecord['kind'], raw: Uint8Array): DecodedRecord {
    const start = this.lineStart;
    this.lineStart = -1;
    if (this.r.remaining !== 0) {
      if (start >= 0 && this.out !== undefined) this.out.length = start;
      this.lineSlot = -1;
      return this.lengthError(id, raw);
    }
    if (this.missedSlot >= 0) this.keepLine();
    return this.written(id, kind, this.names[id], raw);
  }

  /**
   * Begins the line of the record being decoded: room in `out` for `room` bytes besides the
   * timestamp and newline, then the timestamp `t` (none when -1). Every line written as bytes
   * starts here, so that `doneWritten` can take it back and `keepLine` finds its tail.
   */
  private beginLine(out: TextBlocks, room: number, t: number): void {
    this.lineStart = out.startLine(room + TIMESTAMP_ROOM);
    if (t >= 0) out.digits10(t);
    this.tailStart = out.length;
  }

  /** Keeps the line just written (its newline aside) in the slot the record was not found in. */
  private keepLine(): void {
    const slot = this.missedSlot;
    this.missedSlot = -1;
    const out = this.out;
    if (out === undefined) return;
    const length = out.length - 1 - this.tailStart;
    if (length >= LINE_ROOM) return;
    out.keepWords(this.tailStart, length, this.lineWords, slot * (LINE_ROOM / 4));
    this.lineLengths[slot] = length;
    this.lineParts[slot] = this.missedParts;
  }

  /** The record of a line written as bytes (its text is ''). */
  private written(id: number, kind: DecodedRecord['kind'], name: string, raw: Uint8Array): DecodedRecord {
    const known = this.writtenRecords[id];
    if (known !== undefined && known.kind === kind && known.name === name && known.raw === raw) return known;
    const record: DecodedRecord = Object.freeze({
      kind,
      type: id,
      name,
      targetTs: null,
      fields: NO_FIELDS,
      text: '',
      raw,
    });
    this.writtenRecords[id] = record;
    return record;
  }

  override memoLine(t: number, m: PieceMemo): string {
    const out = this.out;
    if (out === undefined) return super.memoLine(t, m);
    this.beginLine(out, m.length, t);
    writeTail(out, m);
    out.endLine();
    return '';
  }

  override tsLine(t: number, rest: string): string {
    const out = this.out;
    if (out === undefined) return super.tsLine(t, rest);
    this.beginLine(out, rest.length, t);
    out.latin1(rest);
    out.endLine();
    return '';
  }

  override partsLine(t: number, p: LineParts, v0: string, v1: string, v2 = '', v3 = '', v4 = ''): string {
    if (this.out === undefined) return super.partsLine(t, p, v0, v1, v2, v3, v4);
    this.writePartsLine(this.out, t, p, v0, v1, v2, v3, v4);
    return '';
  }

  override plainLine(p: LineParts, v0: string, v1: string, v2 = '', v3 = ''): string {
    if (this.out === undefined) return super.plainLine(p, v0, v1, v2, v3);
    this.writePartsLine(this.out, -1, p, v0, v1, v2, v3, '');
    return '';
  }

  /** The line of `partsLine` (`plainLine` when `t` is -1: no timestamp), written as bytes. */
  private writePartsLine(
    out: TextBlocks,
    t: number,
    p: LineParts,
    v0: string,
    v1: string,
    v2: string,
    v3: string,
    v4: string,
  ): void {
    this.beginLine(out, p.length + v0.length + v1.length + v2.length + v3.length + v4.length, t);
    writeParts(out, p, v0, v1, v2, v3, v4);
    out.endLine();
  }

  override timeEvtLine(t: number, m: PieceMemo, tim: number, int: number): string {
    const out = this.out;
    if (out === undefined) return super.timeEvtLine(t, m, tim, int);
    this.beginLine(out, m.length + COUNTERS_ROOM, t);
    writeTail(out, m);
    out.latin1(',Tim=');
    out.dec(tim);
    out.latin1(',Int=');
    out.dec(int);
    out.endLine();
    return '';
  }

  protected override userLine(
    id: number,
    name: string,
    nameSpaced: string,
    t: number,
    raw: Uint8Array,
  ): DecodedRecord | null {
    const out = this.out;
    const r = this.r;
    if (out === undefined || r.errors !== '') return null;
    const from = r.pos;
    const remaining = r.remaining;
    const start = out.startLine(TIMESTAMP_ROOM + nameSpaced.length + USER_LINE_ROOM);
    out.digits10(t);
    const tail = out.length;
    out.latin1(nameSpaced);
    if (writeUserElements(r, out, start)) {
      this.userTail = tail;
      this.userTailLength = out.length - tail;
      this.lineT[0] = t;
      out.endLine();
      return this.written(id, 'record', name, raw);
    }
    out.length = start;
    r.rewind(from, remaining);
    return null;
  }

  /** Read while the base class's fields are made, before `out` is set: true either way. */
  protected override get copiesEveryLine(): boolean {
    return true;
  }

  override get fieldsWanted(): boolean {
    return false;
  }

  protected override targetTsOf(): null {
    return null;
  }

  protected override userFields(): Fields {
    return NO_FIELDS;
  }
}

/**
 * A line's parts and values, one after the other (LineParts.join as bytes), in one loop over the
 * eleven pieces: a piece's characters are its bytes (the parts are Latin-1, and so is every value
 * a parser prints). With a call a piece, TurboFan compiled eleven inlined copying loops here, the
 * costliest function of a decode of the bench's dpp_mix (--trace-opt: 28-32 ms; 7-8 ms now), for
 * no faster a line (ticks' and dictionaries' lines, alternated in one process: the same).
 */
function writeParts(out: TextBlocks, p: LineParts, v0: string, v1: string, v2: string, v3: string, v4: string): void {
  const b = out.bytes;
  let at = out.length;
  for (let piece = 0; piece < 11; piece++) {
    let s: string;
    switch (piece) {
      case 0:
        s = p.p0;
        break;
      case 1:
        s = v0;
        break;
      case 2:
        s = p.p1;
        break;
      case 3:
        s = v1;
        break;
      case 4:
        s = p.p2;
        break;
      case 5:
        s = v2;
        break;
      case 6:
        s = p.p3;
        break;
      case 7:
        s = v3;
        break;
      case 8:
        s = p.p4;
        break;
      case 9:
        s = v4;
        break;
      default:
        s = p.p5;
    }
    for (let i = 0; i < s.length; i++) b[at++] = s.charCodeAt(i);
  }
  out.length = at;
}

/**
 * A kept line tail, written from its parts. (A tail that comes again with the same values was
 * found by `lineAgain` already, and copied from the bytes kept there.)
 */
function writeTail(out: TextBlocks, m: PieceMemo): void {
  writeParts(out, m.parts, m.v0, m.v1, m.v2, m.v3, m.v4);
}
