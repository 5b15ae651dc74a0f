const LOWER_HEX = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
const UPPER_HEX = Uint8Array.from('0123456789ABCDEF', (c) => c.charCodeAt(0));
const DIGIT_0 = 0x30;
const NEWLINE = 0x0a;
const utf8 = new TextEncoder();
const utf8Text = new TextDecoder();

/** Bytes of each buffer handed out; lines may run across two of them (they are written in order). */
const DEFAULT_CAPACITY = 256 << 10;
/** Buffers kept for reuse: what the owner has in flight at a time (a few megabytes at most). */
const MAX_SPARE = 16;
/** Longest piece `raw` copies byte by byte. */
const SHORT_COPY = 32;

/**
 * Output text and bytes written straight into byte buffers. A listing of a large STP stream is
 * hundreds of megabytes of JSON lines: a string per line costs more than the decoding and makes
 * the heap grow with the output. With `onFull`, a full buffer goes to its owner (who writes it out
 * and gives it back with `recycle`), so memory stays the same whatever the output size; without,
 * the buffer grows and `takeText` reads what was written.
 */
export class OutputBuffer {
  bytes: Uint8Array;
  length = 0;
  private readonly spare: Uint8Array[] = [];

  constructor(
    private readonly onFull: ((bytes: Uint8Array) => void) | null = null,
    private readonly capacity = DEFAULT_CAPACITY,
  ) {
    this.bytes = new Uint8Array(capacity);
  }

  /** Hands what is written to `onFull` (nothing when empty). */
  flush(): void {
    if (this.length === 0 || this.onFull === null) return;
    const full = this.bytes.subarray(0, this.length);
    this.bytes = this.spare.pop() ?? new Uint8Array(this.capacity);
    this.length = 0;
    this.onFull(full);
  }

  /** A buffer `onFull` handed out, written and free again. */
  recycle(bytes: Uint8Array): void {
    if (bytes.buffer.byteLength === this.capacity && this.spare.length < MAX_SPARE) {
      this.spare.push(new Uint8Array(bytes.buffer));
    }
  }

  /** What was written since the last call, as text (the buffer is then empty). */
  takeText(): string {
    const text = utf8Text.decode(this.bytes.subarray(0, this.length));
    this.length = 0;
    return text;
  }

  /** A copy of what was written since the last call (the buffer is then empty). */
  takeBytes(): Uint8Array {
    const bytes = this.bytes.slice(0, this.length);
    this.length = 0;
    return bytes;
  }

  /** Text of ASCII characters only (names, keys, digits), one byte each. */
  ascii(text: string): void {
    const n = text.length;
    if (this.length + n > this.bytes.length) this.makeRoom(n);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < n; i++) bytes[at++] = text.charCodeAt(i);
    this.length = at;
  }

  /** Any text, as UTF-8. */
  text(text: string): void {
    this.makeRoom(text.length * 3);
    this.length += utf8.encodeInto(text, this.bytes.subarray(this.length)).written;
  }

  newline(): void {
    if (this.length + 1 > this.bytes.length) this.makeRoom(1);
    this.bytes[this.length++] = NEWLINE;
  }

  /** Bytes as they are. */
  raw(data: Uint8Array): void {
    const n = data.length;
    if (this.length + n > this.bytes.length) this.makeRoom(n);
    const at = this.length;
    // A short piece is cheaper copied a byte at a time than through `set`'s call.
    if (n > SHORT_COPY) this.bytes.set(data, at);
    else for (let i = 0; i < n; i++) this.bytes[at + i] = data[i];
    this.length = at + n;
  }

  /** A non-negative integer (up to 2^53) in decimal. */
  uint(value: number): void {
    if (value > 0x7fffffff) {
      // Above 31 bits: the high digits first, then the low nine as a 31-bit number.
      const high = Math.floor(value / 1e9);
      this.uint(high);
      this.uintDigits(value - high * 1e9, 9);
      return;
    }
    let digits = 1;
    for (let limit = 10; value >= limit && digits < 10; limit *= 10) digits++;
    this.uintDigits(value, digits);
  }

  /** A 31-bit integer as exactly `digits` decimal digits (leading zeros). */
  private uintDigits(value: number, digits: number): void {
    if (this.length + digits > this.bytes.length) this.makeRoom(digits);
    const bytes = this.bytes;
    let at = this.length + digits;
    this.length = at;
    let rest = value | 0;
    for (let i = 0; i < digits; i++) {
      const next = (rest / 10) | 0;
      bytes[--at] = DIGIT_0 + rest - next * 10;
      rest = next;
    }
  }

  /** `data[start, end)` as lower-case hex, two digits a byte. */
  hexBytes(data: Uint8Array, start: number, end: number): void {
    const n = (end - start) * 2;
    if (this.length + n > this.bytes.length) this.makeRoom(n);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = start; i < end; i++) {
      const b = data[i];
      bytes[at++] = LOWER_HEX[b >>> 4];
      bytes[at++] = LOWER_HEX[b & 15];
    }
    this.length = at;
  }

  /** Nibble values `nibbles[start, end)`, one upper-case hex digit each. */
  hexNibbles(nibbles: Uint8Array, start: number, end: number): void {
    const n = end - start;
    if (this.length + n > this.bytes.length) this.makeRoom(n);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = start; i < end; i++) bytes[at++] = UPPER_HEX[nibbles[i]];
    this.length = at;
  }

  /** The low `digits` (at most 8) upper-case hex digits of a 32-bit value. */
  hex32(value: number, digits: number): void {
    if (this.length + digits > this.bytes.length) this.makeRoom(digits);
    const bytes = this.bytes;
    const at = this.length;
    for (let i = digits - 1, v = value; i >= 0; i--, v >>>= 4) bytes[at + i] = UPPER_HEX[v & 15];
    this.length = at + digits;
  }

  private makeRoom(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    this.flush();
    if (this.length + n <= this.bytes.length) return;
    // A line longer than a buffer (or a buffer nobody empties): a bigger one, keeping what is there.
    let size = this.bytes.length * 2;
    while (size < this.length + n) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.length));
    this.bytes = bigger;
  }
}
