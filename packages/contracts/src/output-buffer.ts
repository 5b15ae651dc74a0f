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
 * Output text and bytes written straight into byte buffers. A listing of a large STP stream, or
 * `tracehub decode`'s qspy text, is hundreds of megabytes of lines: a string per line costs more
 * than the decoding and makes the heap grow with the output. With `onFull`, a full buffer goes to
 * its owner (who writes it out and gives it back with `recycle`, or, with `doneOnReturn`, is done
 * with it when `onFull` returns, so that the same buffer is filled again while it is still in the
 * cache), and memory stays the same whatever the output size; without, the buffer grows and
 * `takeText` reads what was written.
 */
export class OutputBuffer {
  bytes: Uint8Array;
  length = 0;
  private readonly spare: Uint8Array[] = [];

  constructor(
    private readonly onFull: ((bytes: Uint8Array) => void) | null = null,
    private readonly capacity = DEFAULT_CAPACITY,
    private readonly doneOnReturn = false,
  ) {
    this.bytes = new Uint8Array(capacity);
  }

  /** Hands what is written to `onFull` (nothing when empty). */
  flush(): void {
    if (this.length === 0 || this.onFull === null) return;
    if (this.doneOnReturn) {
      this.onFull(this.bytes.subarray(0, this.length));
      this.length = 0;
      return;
    }
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

  /**
   * Room for `n` more bytes: the caller writes them into the returned array from `length` on
   * (with the `put` functions below) and then moves `length` past them.
   */
  reserve(n: number): Uint8Array {
    if (this.length + n > this.bytes.length) this.makeRoom(n);
    return this.bytes;
  }

  /** A copy of what was written since the last call (the buffer is then empty). */
  takeBytes(): Uint8Array {
    const bytes = this.bytes.slice(0, this.length);
    this.length = 0;
    return bytes;
  }

  /**
   * Text of one byte a character: ASCII (names, keys, digits), or Latin-1 (qspy's text, where a
   * character stands for the target's byte).
   */
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
    this.length = putBytes(this.reserve(data.length), this.length, data);
  }

  /** A non-negative integer (up to 2^53) in decimal. */
  uint(value: number): void {
    this.length = putUint(this.reserve(MAX_DECIMAL_DIGITS), this.length, value);
  }

  /** `data[start, end)` as lower-case hex, two digits a byte. */
  hexBytes(data: Uint8Array, start: number, end: number): void {
    this.length = putHex(this.reserve((end - start) * 2), this.length, data, start, end);
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

/** Most decimal digits `putUint` writes (2^53 has 16). */
export const MAX_DECIMAL_DIGITS = 16;

/** `data` into `bytes` at `at`; returns the index after it. */
export function putBytes(bytes: Uint8Array, at: number, data: Uint8Array): number {
  const n = data.length;
  // A short piece is cheaper copied a byte at a time than through `set`'s call.
  if (n > SHORT_COPY) bytes.set(data, at);
  else for (let i = 0; i < n; i++) bytes[at + i] = data[i];
  return at + n;
}

/** A non-negative integer (up to 2^53) in decimal into `bytes` at `at`; returns the index after it. */
export function putUint(bytes: Uint8Array, at: number, value: number): number {
  if (value > 0x7fffffff) {
    // Above 31 bits: the high digits first, then the low nine as a 31-bit number.
    const high = Math.floor(value / 1e9);
    return putDigits(bytes, putUint(bytes, at, high), value - high * 1e9, 9);
  }
  let digits = 1;
  for (let limit = 10; value >= limit && digits < 10; limit *= 10) digits++;
  return putDigits(bytes, at, value, digits);
}

/** A 31-bit integer as exactly `digits` decimal digits (leading zeros). */
function putDigits(bytes: Uint8Array, at: number, value: number, digits: number): number {
  const end = at + digits;
  let rest = value | 0;
  for (let i = end - 1; i >= at; i--) {
    const next = (rest / 10) | 0;
    bytes[i] = DIGIT_0 + rest - next * 10;
    rest = next;
  }
  return end;
}

/** `data[start, end)` as lower-case hex into `bytes` at `at`; returns the index after it. */
export function putHex(bytes: Uint8Array, at: number, data: Uint8Array, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    const b = data[i];
    bytes[at++] = LOWER_HEX[b >>> 4];
    bytes[at++] = LOWER_HEX[b & 15];
  }
  return at;
}
