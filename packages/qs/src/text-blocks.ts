import { OutputBuffer } from '@tracehub/contracts/output-buffer';
import { DEC4_BYTES } from './format.js';

/** Bytes of each block handed out. */
const BLOCK_BYTES = 256 * 1024;
/** String lines encoded in one go. */
const BATCH = 256;

/**
 * Decoded text as bytes in blocks of 256 KiB (an OutputBuffer), ready to be written out: qspy's
 * text as Latin-1 (every target byte comes out as qspy wrote it), or JSON lines as UTF-8.
 *
 * Text comes in two ways, kept in order:
 * - `line(s)`: a line as a string. Lines are appended to one string a few hundred at a time
 *   and each batch is encoded into the block in one go: encoding costs a call into the
 *   runtime, which once per line cost more than decoding the record. Appending (not an array
 *   joined) leaves V8 a rope that the encoder copies once, where a join copies it twice.
 * - `startLine()` and the OutputBuffer writes after it: a line written byte by byte by the
 *   decoder that makes it (QsDecoder.textTo), with no string made at all. The batch of string
 *   lines before it is encoded first.
 */
export class TextBlocks extends OutputBuffer {
  private readonly encoding: 'latin1' | 'utf8';
  /** Blocks handed out and not taken yet (without `writeNow`). */
  private readonly full: Uint8Array[];
  /** Lines not encoded yet, each with its newline, and how many. */
  private pending: string;
  private pendingLines: number;

  /**
   * @param encoding of the string lines: latin1 for qspy's text, utf8 for JSON
   * @param writeNow a writer that is done with the bytes when it returns (a synchronous write):
   *   each block goes to it as soon as it is full, and the same block is filled again; `take()`
   *   then writes the part filled and gives no blocks. Without it, `take()` gives the blocks
   *   filled, and `recycle` gives one back to be filled again once it is written.
   */
  constructor(encoding: 'latin1' | 'utf8' = 'latin1', writeNow?: (bytes: Uint8Array) => void) {
    const full: Uint8Array[] = [];
    super(writeNow ?? ((bytes) => full.push(bytes)), BLOCK_BYTES, writeNow !== undefined);
    this.encoding = encoding;
    this.full = full;
    this.pending = '';
    this.pendingLines = 0;
  }

  /** Appends a line (its newline added). */
  line(s: string): void {
    this.pending = this.pending + s + '\n';
    if (++this.pendingLines === BATCH) this.encodeLines();
  }

  /**
   * Starts a line written as bytes of at most `room` bytes, all in the current block: the string
   * lines before it are encoded first. Returns where the line starts, for `length = start` to
   * take it back.
   */
  startLine(room: number): number {
    if (this.pendingLines !== 0) this.encodeLines();
    this.reserve(room);
    return this.length;
  }

  // Writes inside a line begun with `startLine`, whose room is reserved, so none checks for room
  // as OutputBuffer's writes do: with the checks, the record parsers that call these grew past
  // what V8 inlines, and `tracehub decode` of big_stress ran 3.3% more instructions (callgrind).

  /** Latin-1 text, one byte a character. */
  latin1(s: string): void {
    const b = this.bytes;
    let p = this.length;
    for (let i = 0; i < s.length; i++) b[p++] = s.charCodeAt(i);
    this.length = p;
  }

  /**
   * `n` bytes kept for reuse (a line's tail), from 32-bit word `from` of `src` on, four bytes a
   * store: up to 3 bytes past `n` are written too, inside the line's room, and written over by
   * what comes next. (`set` of a Uint8Array, a builtin call, was a tenth of a DPP capture's
   * time; a byte loop took three times as long.)
   */
  copyWords(src: Int32Array, from: number, n: number): void {
    const words = this.words();
    const p = this.length;
    for (let i = 0; i < n; i += 4) words.setInt32(p + i, src[from++], true);
    this.length = p + n;
  }

  /**
   * Bytes `start .. start + n` of the current block into `dst` from 32-bit word `to` on: the
   * other way of `copyWords`. The last word's bytes past `n` are zeros.
   */
  keepWords(start: number, n: number, dst: Int32Array, to: number): void {
    const words = this.words();
    let i = 0;
    for (; i + 4 <= n; i += 4) dst[to++] = words.getInt32(start + i, true);
    if (i === n) return;
    const b = this.bytes;
    let last = 0;
    for (let shift = 0; i < n; i++, shift += 8) last |= b[start + i] << shift;
    dst[to] = last;
  }

  /** The current block as a DataView, made again when the block changes. */
  private words(): DataView {
    if (this.wordsOf !== this.bytes) {
      this.wordsOf = this.bytes;
      this.wordsView = new DataView(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength);
    }
    return this.wordsView;
  }
  private wordsOf: Uint8Array | undefined;
  private wordsView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

  /** The line's newline. */
  endLine(): void {
    this.bytes[this.length++] = 0x0a;
  }

  /** `%u` of a non-negative integer below 2^53. */
  dec(v: number): void {
    if (v < 10) {
      this.bytes[this.length++] = 0x30 + v;
      return;
    }
    this.length += writeDigits(this.bytes, this.length, v, digitCount(v));
  }

  /** `%0<digits>X` of an unsigned 32-bit value (`digits` of 2, 4 or 8). */
  hex(v: number, digits: number): void {
    const b = this.bytes;
    const p = this.length;
    for (let i = digits - 1; i >= 0; i--) {
      b[p + i] = HEX_DIGITS[v & 0xf];
      v >>>= 4;
    }
    this.length = p + digits;
  }

  /** `%010u` of a non-negative integer: QSPY's timestamp column. */
  digits10(v: number): void {
    if (v > 0xffffffff) {
      this.wideDigits10(v);
      return;
    }
    const b = this.bytes;
    const p = this.length;
    // Two divisions by 10^4 leave three groups; each group's digits come from the table. As
    // unsigned 32-bit divisions by a constant (the `>>> 0`s), TurboFan makes each a multiply
    // and a shift: as doubles, the two divisions were a tenth of `lineAgain`'s samples.
    const u = v >>> 0;
    const hi = (u / 10000) >>> 0;
    const top = (hi / 10000) >>> 0;
    const top2 = top * 4 + 2;
    b[p] = DEC4_BYTES[top2];
    b[p + 1] = DEC4_BYTES[top2 + 1];
    // The two groups of four digits a store each (every line has a timestamp).
    const words = this.words();
    words.setInt32(p + 2, DEC4_WORDS[hi - top * 10000], HOST_LITTLE_ENDIAN);
    words.setInt32(p + 6, DEC4_WORDS[u - hi * 10000], HOST_LITTLE_ENDIAN);
    this.length = p + 10;
  }

  /** `digits10` of a value past 32 bits (a target of 8-byte timestamps), out of its line. */
  private wideDigits10(v: number): void {
    // As TimestampText writes it: String() (exact digits, whatever the size; past 2^32, there
    // are ten digits or more, so no zeros to pad with).
    this.latin1(String(v));
  }

  /**
   * ` %<width>d` of an integer below 2^53 in magnitude: a space, then the value right-aligned
   * to `width` (a user record's element with its separating space).
   */
  spacedDec(v: number, width: number): void {
    const b = this.bytes;
    let p = this.length;
    const negative = v < 0;
    const magnitude = negative ? -v : v;
    const digits = digitCount(magnitude);
    const length = negative ? digits + 1 : digits;
    b[p++] = 0x20;
    for (let n = width - length; n > 0; n--) b[p++] = 0x20;
    if (negative) b[p++] = 0x2d;
    this.length = p + writeDigits(b, p, magnitude, digits);
  }

  /** The blocks filled so far (the current one included), to be written in order (none with `writeNow`). */
  take(): Uint8Array[] {
    this.encodeLines();
    this.flush();
    return this.full.splice(0);
  }

  private encodeLines(): void {
    if (this.pendingLines === 0) return;
    const text = this.pending;
    this.pending = '';
    this.pendingLines = 0;
    // Latin-1 is one byte per character; UTF-8 at most three per UTF-16 unit.
    const bytes = this.reserve(this.encoding === 'latin1' ? text.length : text.length * 3);
    const block = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    this.length += block.write(text, this.length, this.encoding);
  }
}

const HEX_DIGITS = Uint8Array.from('0123456789ABCDEF', (c) => c.charCodeAt(0));

/**
 * DEC4_BYTES four at a time: the digits of 0000..9999, each as the 32-bit word of this host's
 * byte order (the same bytes seen as words, made with no loop), written back in that order.
 */
const DEC4_WORDS = new Int32Array(new Uint8Array(DEC4_BYTES).buffer);
const HOST_LITTLE_ENDIAN = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/**
 * 10^1 .. 10^16 as doubles. Every value is compared with the first of them, and as doubles: had
 * the comparisons for five digits and more run only when such a value first came, the code
 * compiled before then (spacedDec's, and a user record writer's around it) would be thrown away
 * and compiled again, as it was in the bench capture.
 */
const POW10_FROM_10 = Float64Array.from({ length: 16 }, (_, i) => 10 ** (i + 1));

/** Decimal digits of a non-negative integer (at most 17). */
function digitCount(v: number): number {
  let n = 1;
  while (n < 17 && v >= POW10_FROM_10[n - 1]) n++;
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
    b[end - 4] = DEC4_BYTES[at];
    b[end - 3] = DEC4_BYTES[at + 1];
    b[end - 2] = DEC4_BYTES[at + 2];
    b[end - 1] = DEC4_BYTES[at + 3];
    end -= 4;
    v = q;
  }
  const first = v * 4 + 4 - (end - p);
  for (let i = 0; p + i < end; i++) b[p + i] = DEC4_BYTES[first + i];
  return digits;
}
