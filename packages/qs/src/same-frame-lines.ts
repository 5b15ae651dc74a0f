import { PayloadReader } from './reader.js';

/** Frames kept, direct-mapped by a hash of their bytes (a power of two). */
const SLOTS = 4096;
/**
 * 32-bit words of a slot, all in one row so that finding a frame reads one stretch of memory:
 * its record id, lengths, FOUND bit and timestamp's bytes, the stamp, the frame's bytes after the timestamp
 * (without the checksum), and its line's bytes after the timestamp (without the newline).
 */
const ROW_WORDS = 64;
/** Where the frame's bytes start in a row, and how many words they may take. */
const KEY_AT = 2;
const KEY_WORDS = 8;
const KEY_BYTES = KEY_WORDS * 4;
/** Where the line's bytes start in a row, and how many bytes they may take. */
const SAME_FRAME_LINE_AT = KEY_AT + KEY_WORDS;
const LINE_BYTES = (ROW_WORDS - SAME_FRAME_LINE_AT) * 4;
/** Frames of a window of look-ups, the fewest found in it to go on, and the frames passed over after one with fewer. */
const WINDOW = 4096;
const WINDOW_HITS_MIN = WINDOW / 2;
const PAUSE = 8 * WINDOW;
/** The bit of a row's first word set when its frame was found again. */
const FOUND = 1 << 24;
/** Where a row's first word holds the timestamp's bytes its frame was kept with (0 to 8). */
const TIME_BYTES_SHIFT = 25;
/** The bits of a row's first word that name its frame: record id, the key's length, the timestamp's bytes. */
const ROW_NAME_BITS = 0xffff | (0xf << TIME_BYTES_SHIFT);
/** `timeBytes` of a record id not seen yet, and of one whose lines are not found by their bytes. */
const UNKNOWN = -1;
const NEVER = -2;

/**
 * Frames whose line was written before, found again by their bytes: a QP application sends the
 * same records over and over, and a frame that comes again byte for byte (its sequence number,
 * timestamp and checksum aside) prints the same line, with only the timestamp new. Finding it by
 * its bytes skips its parser, the reads of its fields and the look-up by their values
 * (QsTextRecordDecoder.lineAgain).
 *
 * Only frames of records whose line was found or kept by their values are kept here, so only
 * records that print their fields and change no state, and a kept frame is good only while the
 * dictionaries and configuration are as they were (the stamp).
 *
 * A record's timestamp is where its parser read it first, at the payload's start; that is
 * checked on every frame kept: a record id whose printed timestamp is not those bytes is not
 * kept from then on (until the configuration changes).
 */
export class SameFrameLines {
  /** By record id: the timestamp's bytes at the payload's start (0: its line has none), UNKNOWN or NEVER. */
  private readonly timeBytes = new Int8Array(256).fill(UNKNOWN);
  /**
   * The configuration `timeBytes` holds for (a count of configurations taken): where a record's
   * timestamp is depends on the record layouts, not on the dictionaries.
   */
  private layouts = -1;
  /** The slots' rows (see ROW_WORDS); a row's first word is 0 while it holds nothing. */
  readonly rows = new Int32Array(SLOTS * ROW_WORDS);
  /**
   * Frames looked up in the current window and found, and how many more are not looked up at
   * all: where few frames are found again (a stream whose dictionaries change every few dozen
   * records, say), looking them up and keeping them costs more than it saves.
   */
  private looked = 0;
  private found = 0;
  /** PAUSE at first, for the reason given at the constructor. */
  private pausedFor = PAUSE;
  /** Reads a found frame's timestamp, as its parser read it. */
  private readonly reader = new PayloadReader();
  /**
   * After `find`: the frame's timestamp (-1: its line has none), in `time[0]`, and its line's
   * length in bytes. The timestamp lives in a Float64Array, not a field: a field that first held
   * -1 (a small integer) and then a timestamp past 2^30 changes its object's layout, which threw
   * away the compiled code of the deframer's loop and of everything that reads this object.
   */
  readonly time = new Float64Array(1);
  lineLength = 0;
  // Words are read through a DataView of the frame's buffer: the pushed chunk, or the
  // deframer's own buffer for frames with escapes. One view of each is kept.
  private chunk: Uint8Array | undefined;
  private chunkView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private other: Uint8Array | undefined;
  private otherView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

  constructor() {
    // Written again with another value, so that V8 takes `pausedFor` for a variable from the
    // start: as a constant 0, the first pause threw away the compiled code of `find` and of the
    // decoder's `decode` that inlines it ("dependent field type constness changed").
    this.pausedFor = 0;
  }

  /**
   * Where in `rows` the line of the frame `buf[start .. start+len)` (seq, id, payload, checksum)
   * starts, its timestamp and length left in `time[0]` and `lineLength`; -1 when the frame is not kept.
   */
  find(buf: Uint8Array, start: number, len: number, stamp: number, layouts: number): number {
    // Small, to be inlined into the decoder's: while paused, a frame costs no call.
    if (this.pausedFor > 0) {
      this.pausedFor--;
      return -1;
    }
    return this.lookUp(buf, start, len, stamp, layouts);
  }

  private lookUp(buf: Uint8Array, start: number, len: number, stamp: number, layouts: number): number {
    if (++this.looked === WINDOW) {
      if (this.found < WINDOW_HITS_MIN) this.pausedFor = PAUSE;
      this.looked = 0;
      this.found = 0;
    }
    if (layouts !== this.layouts) {
      this.forget(layouts);
      return -1;
    }
    const id = buf[start + 1];
    const timeBytes = this.timeBytes[id];
    if (timeBytes < 0) return -1;
    const from = start + 2 + timeBytes;
    const n = start + len - 1 - from;
    if (n < 0 || n > KEY_BYTES || from + ((n + 3) & ~3) > buf.length) return -1;
    const view = this.viewOf(buf);
    const row = slotOf(view, from, n, id) * ROW_WORDS;
    const rows = this.rows;
    const head = rows[row];
    // The timestamp's bytes too: a row kept under another configuration that rendered alike
    // (the same stamp again) may have had its key elsewhere in the frame.
    const name = id | (n << 8) | (timeBytes << TIME_BYTES_SHIFT);
    if ((head & ROW_NAME_BITS) !== name || rows[row + 1] !== (stamp | 0)) return -1;
    let at = row + KEY_AT;
    const full = from + (n & ~3);
    for (let p = from; p < full; p += 4) if (view.getInt32(p, true) !== rows[at++]) return -1;
    if ((n & 3) !== 0 && (view.getInt32(full, true) & LAST_WORD_MASKS[n & 3]) !== rows[at]) return -1;
    if (timeBytes === 0) this.time[0] = -1;
    else if (timeBytes === 4) {
      // Read through the view, not the reader's `u`: its `>>> 0` is compiled for the values it
      // has seen, and the first timestamp past 2^31 threw this method's optimised code away.
      this.time[0] = view.getUint32(start + 2, true);
    } else {
      this.reader.reset(buf, start + 2, timeBytes);
      this.time[0] = this.reader.u(timeBytes);
    }
    this.lineLength = (head >>> 16) & 0xff;
    if ((head & FOUND) === 0) rows[row] = head | FOUND;
    this.found++;
    return row + SAME_FRAME_LINE_AT;
  }

  /** Whether frames are kept now (not while look-ups pause). */
  get keeping(): boolean {
    return this.pausedFor === 0;
  }

  /**
   * Keeps the frame `buf[start .. start+len)` with its line, whose bytes after the timestamp are
   * the `lineLength` bytes from word `lineAt` of `lines`. `timeBytes` are the timestamp's bytes at
   * the payload's start (0: the line has none), or -1 when the timestamp printed is not those
   * bytes (see `timeBytesOf`): that record id is not kept from then on.
   */
  keep(
    buf: Uint8Array,
    start: number,
    len: number,
    timeBytes: number,
    stamp: number,
    layouts: number,
    lines: Int32Array,
    lineAt: number,
    lineLength: number,
  ): void {
    if (layouts !== this.layouts) this.forget(layouts);
    const id = buf[start + 1];
    const known = this.timeBytes[id];
    if (known === NEVER) return;
    if (timeBytes < 0 || (known !== UNKNOWN && known !== timeBytes)) {
      this.timeBytes[id] = NEVER;
      return;
    }
    const from = start + 2 + timeBytes;
    const n = start + len - 1 - from;
    if (n < 0 || n > KEY_BYTES || lineLength > LINE_BYTES || from + ((n + 3) & ~3) > buf.length) return;
    this.timeBytes[id] = timeBytes;
    const view = this.viewOf(buf);
    const row = slotOf(view, from, n, id) * ROW_WORDS;
    const rows = this.rows;
    // A frame found again since it was kept stays, once: a capture's few frames that come over
    // and over are not pushed out by the many that come once (a second chance).
    const head = rows[row];
    if ((head & FOUND) !== 0 && rows[row + 1] === (stamp | 0)) {
      rows[row] = head & ~FOUND;
      return;
    }
    rows[row] = id | (n << 8) | (lineLength << 16) | (timeBytes << TIME_BYTES_SHIFT);
    rows[row + 1] = stamp | 0;
    let at = row + KEY_AT;
    const full = from + (n & ~3);
    for (let p = from; p < full; p += 4) rows[at++] = view.getInt32(p, true);
    if ((n & 3) !== 0) rows[at] = view.getInt32(full, true) & LAST_WORD_MASKS[n & 3];
    const lineEnd = lineAt + ((lineLength + 3) >> 2);
    at = row + SAME_FRAME_LINE_AT;
    for (let w = lineAt; w < lineEnd; w++) rows[at++] = lines[w];
  }

  /**
   * Whether the frame `buf[start .. start+len)`, its timestamp `timeBytes` long, came before
   * (by its slot and a signature, direct-mapped: a collision only keeps a frame early): for frames
   * whose line is not looked up by its values (user records'), which are kept the second time
   * they come. Most frames that come once never come again.
   */
  seenBefore(buf: Uint8Array, start: number, len: number, timeBytes: number): boolean {
    const from = start + 2 + timeBytes;
    const n = start + len - 1 - from;
    if (n < 0 || n > KEY_BYTES || from + ((n + 3) & ~3) > buf.length) return false;
    const view = this.viewOf(buf);
    const id = buf[start + 1];
    const at = slotOf(view, from, n, id);
    // With the slot, the key's last word (where a changing value, a counter, mostly is).
    const signature = (id | (n << 8)) ^ (n >= 4 ? view.getInt32(from + n - 4, true) : 0);
    if (this.seen[at] === signature) return true;
    this.seen[at] = signature;
    return false;
  }

  /** Frames of record `id` are neither kept nor looked up from now on (until the configuration changes). */
  stopKeeping(id: number): void {
    this.timeBytes[id] = NEVER;
  }

  /** Hashes of the frames asked about by `seenBefore`, by their slot. */
  private readonly seen = new Int32Array(SLOTS);

  /** The configuration changed: where each record's timestamp is may differ. */
  private forget(layouts: number): void {
    this.layouts = layouts;
    this.timeBytes.fill(UNKNOWN);
  }

  private viewOf(buf: Uint8Array): DataView<ArrayBufferLike> {
    if (buf === this.chunk) return this.chunkView;
    if (buf === this.other) return this.otherView;
    // The buffer seen last becomes the other one: the chunk and the deframer's buffer alternate.
    this.other = this.chunk;
    this.otherView = this.chunkView;
    this.chunk = buf;
    this.chunkView = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    return this.chunkView;
  }
}

/** The bytes of the last word that belong to the frame, by how many there are (1 to 3). */
const LAST_WORD_MASKS = Int32Array.of(-1, 0xff, 0xffff, 0xffffff);

/**
 * The bytes of the timestamp `t` printed for the frame `buf[start .. start+len)`: 0 when none was
 * printed (-1), `timeSize` when the payload starts with it, else -1. It is read with `r` as the
 * record's parser read it; `r` is left on the frame.
 */
export function timeBytesOf(
  r: PayloadReader,
  buf: Uint8Array,
  start: number,
  len: number,
  t: number,
  timeSize: number,
): number {
  if (t < 0) return 0;
  // No bytes, though a timestamp is printed (0): 0 would say it has none.
  if (timeSize === 0) return -1;
  r.reset(buf, start + 2, len - 3);
  return r.u(timeSize) === t ? timeSize : -1;
}

/** The slot of the `n` bytes at `from` of a record `id`. */
function slotOf(view: DataView<ArrayBufferLike>, from: number, n: number, id: number): number {
  let h = Math.imul(id ^ (n << 8), 0x9e3779b1);
  const full = from + (n & ~3);
  for (let p = from; p < full; p += 4) h = Math.imul(h ^ view.getInt32(p, true), 0x85ebca6b);
  if ((n & 3) !== 0) h = Math.imul(h ^ (view.getInt32(full, true) & LAST_WORD_MASKS[n & 3]), 0xc2b2ae35);
  return (h ^ (h >>> 15)) & (SLOTS - 1);
}
