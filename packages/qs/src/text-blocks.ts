import { DEC4_BYTES } from './format.js';

/**
 * Decoded text as bytes in blocks of 256 KiB, ready to be written out: qspy's text as Latin-1
 * (every target byte comes out as qspy wrote it), or JSON lines as UTF-8.
 *
 * Text comes in two ways, kept in order:
 * - `line(s)`: a line as a string. Lines are appended to one string a few hundred at a time
 *   and each batch is encoded into the block in one go: encoding costs a call into the
 *   runtime, which once per line cost more than decoding the record. Appending (not an array
 *   joined) leaves V8 a rope that the encoder copies once, where a join copies it twice.
 * - `startLine()` and the writes after it: a line written byte by byte by the decoder that
 *   makes it (QsDecoder.textTo), with no string made at all. The batch of string lines before
 *   it is encoded first.
 *
 * A block the output is done with is filled again (`writeNow`, `recycle`): a fresh 256 KiB
 * buffer costs its page faults every time.
 */
export class TextBlocks {
  private static readonly SIZE = 256 * 1024;
  private static readonly BATCH = 256;
  /** The block being filled and where; written directly by the byte writes. */
  block: Buffer = Buffer.allocUnsafe(TextBlocks.SIZE);
  pos = 0;
  private full: Buffer[] = [];
  /** Blocks written out, to be filled again. */
  private free: Buffer[] = [];
  /** Lines not encoded yet, each with its newline, and how many. */
  private pending = '';
  private pendingLines = 0;

  private readonly encoding: 'latin1' | 'utf8';
  private readonly reuse: boolean;
  private readonly maxFree: number;
  private readonly writeNow: ((bytes: Uint8Array) => void) | undefined;

  /**
   * @param encoding of the string lines: latin1 for qspy's text, utf8 for JSON
   * @param options.writeNow a writer that is done with the bytes when it returns (a synchronous
   *   write): each block goes to it as soon as it is full, and the same block is filled again,
   *   so the text is written from memory still in the cache; `take()` then writes the part
   *   filled and gives no blocks
   * @param options.reuse otherwise, whether blocks given back with `recycle` are filled again
   * @param options.maxFree how many given-back blocks are kept for that (8)
   */
  constructor(
    encoding: 'latin1' | 'utf8' = 'latin1',
    options: { writeNow?: (bytes: Uint8Array) => void; reuse?: boolean; maxFree?: number } = {},
  ) {
    this.encoding = encoding;
    this.writeNow = options.writeNow;
    this.reuse = options.reuse ?? false;
    this.maxFree = options.maxFree ?? 8;
  }

  /** Appends a line (its newline added). */
  line(s: string): void {
    this.pending = this.pending + s + '\n';
    if (++this.pendingLines === TextBlocks.BATCH) this.encodeLines();
  }

  /**
   * Starts a line written as bytes of at most `room` bytes: the string lines before it are
   * encoded first. Returns where the line starts, for `pos = start` to take it back.
   */
  startLine(room: number): number {
    if (this.pendingLines !== 0) this.encodeLines();
    if (this.pos + room > this.block.length) this.newBlock(room);
    return this.pos;
  }

  /** `%010u` of a non-negative integer: QSPY's timestamp column. */
  digits10(v: number): void {
    if (v >= 10000000000) {
      this.latin1(String(v));
      return;
    }
    const b = this.block;
    const p = this.pos;
    // Two divisions by 10^4 leave three groups; each group's digits come from the table.
    const hi = Math.floor(v / 10000);
    const top = Math.floor(hi / 10000);
    const lo4 = (v - hi * 10000) * 4;
    const mid4 = (hi - top * 10000) * 4;
    const top2 = top * 4 + 2;
    b[p] = DIGITS4[top2];
    b[p + 1] = DIGITS4[top2 + 1];
    b[p + 2] = DIGITS4[mid4];
    b[p + 3] = DIGITS4[mid4 + 1];
    b[p + 4] = DIGITS4[mid4 + 2];
    b[p + 5] = DIGITS4[mid4 + 3];
    b[p + 6] = DIGITS4[lo4];
    b[p + 7] = DIGITS4[lo4 + 1];
    b[p + 8] = DIGITS4[lo4 + 2];
    b[p + 9] = DIGITS4[lo4 + 3];
    this.pos = p + 10;
  }

  /** `%u` of a non-negative integer below 2^53. */
  dec(v: number): void {
    if (v < 10) {
      this.block[this.pos++] = 0x30 + v;
      return;
    }
    this.pos += writeDigits(this.block, this.pos, v, digitCount(v));
  }

  /**
   * ` %<width>d` of an integer below 2^53 in magnitude: a space, then the value right-aligned
   * to `width` (a user record's element with its separating space).
   */
  spacedDec(v: number, width: number): void {
    const b = this.block;
    let p = this.pos;
    const negative = v < 0;
    const magnitude = negative ? -v : v;
    const digits = digitCount(magnitude);
    const length = negative ? digits + 1 : digits;
    b[p++] = 0x20;
    for (let n = width - length; n > 0; n--) b[p++] = 0x20;
    if (negative) b[p++] = 0x2d;
    this.pos = p + writeDigits(b, p, magnitude, digits);
  }

  /** `%0<digits>X` of an unsigned 32-bit value (`digits` of 2, 4 or 8). */
  hex(v: number, digits: number): void {
    const b = this.block;
    const p = this.pos;
    for (let i = digits - 1; i >= 0; i--) {
      b[p + i] = HEX_DIGITS[v & 0xf];
      v >>>= 4;
    }
    this.pos = p + digits;
  }

  /** One byte. */
  byte(c: number): void {
    this.block[this.pos++] = c;
  }

  /** A string of Latin-1 characters (a flat one: text kept for reuse, table entries, names). */
  latin1(s: string): void {
    const b = this.block;
    let p = this.pos;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Bytes kept for reuse (`set`, a memory copy: a byte loop took three times as long for a line's tail). */
  bytes(src: Uint8Array): void {
    this.block.set(src, this.pos);
    this.pos += src.length;
  }

  /** The blocks filled so far (the current one included), to be written in order (none with `writeNow`). */
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
    if (this.reuse && block.buffer.byteLength === TextBlocks.SIZE && this.free.length < this.maxFree) {
      this.free.push(Buffer.from(block.buffer, 0, TextBlocks.SIZE));
    }
  }

  private encodeLines(): void {
    if (this.pendingLines === 0) return;
    const text = this.pending;
    this.pending = '';
    this.pendingLines = 0;
    // Latin-1 is one byte per character; UTF-8 at most three per UTF-16 unit.
    const max = this.encoding === 'latin1' ? text.length : text.length * 3;
    if (this.pos + max > this.block.length) this.newBlock(max);
    this.pos += this.block.write(text, this.pos, this.encoding);
  }

  /** Moves on to a block with room for `room` bytes. */
  private newBlock(room: number): void {
    this.cut();
    if (room > this.block.length) this.block = Buffer.allocUnsafe(room);
  }

  private cut(): void {
    if (this.pos === 0) return;
    if (this.writeNow !== undefined) {
      this.writeNow(this.block.subarray(0, this.pos));
      this.pos = 0;
      return;
    }
    this.full.push(this.block.subarray(0, this.pos));
    this.block = this.free.pop() ?? Buffer.allocUnsafe(TextBlocks.SIZE);
    this.pos = 0;
  }
}

/** The ASCII digits of 0000..9999, four bytes each. */
const DIGITS4 = DEC4_BYTES;

const HEX_DIGITS = new Uint8Array([...'0123456789ABCDEF'].map((c) => c.charCodeAt(0)));

/** Decimal digits of a non-negative integer. */
function digitCount(v: number): number {
  if (v < 10000) return v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : 4;
  let n = 5;
  for (let limit = 100000; v >= limit && n < 17; limit *= 10) n++;
  return n;
}

/**
 * Writes the `digits` decimal digits of `v` at `p`, four at a time from the table (the last
 * group only its own digits); returns `digits`.
 */
function writeDigits(b: Uint8Array, p: number, v: number, digits: number): number {
  let end = p + digits;
  while (end - p > 4) {
    const q = Math.floor(v / 10000);
    const at = (v - q * 10000) * 4;
    b[end - 4] = DIGITS4[at];
    b[end - 3] = DIGITS4[at + 1];
    b[end - 2] = DIGITS4[at + 2];
    b[end - 1] = DIGITS4[at + 3];
    end -= 4;
    v = q;
  }
  const first = v * 4 + 4 - (end - p);
  for (let i = 0; p + i < end; i++) b[p + i] = DIGITS4[first + i];
  return digits;
}
