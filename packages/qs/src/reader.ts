import { makeKey, type QsKey } from './dictionaries.js';

const TWO_32 = 4294967296;

/**
 * Walks the payload of one record the way QSPY's `QSpyRecord_get*` functions do: a read that
 * does not fit reports "N more bytes needed", returns 0 and leaves `remaining` at -1, so that
 * the record's length check fails (spec 3.1). Error lines are collected in `errors`.
 */
export class PayloadReader {
  buf: Uint8Array = new Uint8Array(0);
  pos = 0;
  /** End of the payload; `remaining` is kept as this and `pos` so that a read updates one field. */
  private end = 0;
  /** Payload bytes left; -1 after a failed read. */
  get remaining(): number {
    return this.end - this.pos;
  }
  /** Field-level error lines of this record, each ending in '\n'. */
  errors = '';
  /**
   * Halves of the last pointer / 64-bit value read. They start as a number outside V8's small
   * integers, so that the fields hold any number from the first: a field that held only small
   * integers and then a half past 2^30 changed the reader's layout, which threw away the
   * compiled code of every parser that reads (the fixtures' captures, repeated, in the CLI bench).
   */
  hi = TWO_32;
  lo = TWO_32;

  /** Starts on `buf[start .. start+length)`; `buf` holds the checksum byte after it. */
  reset(buf: Uint8Array, start: number, length: number): void {
    // Stored only when it changes (most frames are views of the same chunk): the chunk is young
    // and the reader old, so each store went through V8's write barrier, out of line.
    if (this.buf !== buf) this.buf = buf;
    this.pos = start;
    this.end = start + length;
    this.errors = '';
  }

  /**
   * Goes back to `pos` of the same payload, `remaining` bytes before its end (as they were
   * there), as if nothing after it had been read: a failed read moved the end, and left errors.
   */
  rewind(pos: number, remaining: number): void {
    this.pos = pos;
    this.end = pos + remaining;
    this.errors = '';
  }

  /** What a failed read leaves: -1 bytes remaining. */
  private failed(): void {
    this.end = this.pos - 1;
  }

  private fail(size: number, type: string): void {
    this.errors += `   <COMMS> ERROR    ${size - this.remaining} more bytes needed for ${type}${size * 8}_t \n`;
    this.failed();
  }

  // The reads are called for every field of every record. Each keeps its common case (a size
  // the target uses, and enough bytes left) small and hands the rest to a separate method:
  // TurboFan inlines a record's reads only while its inlining budget lasts, and the full
  // versions used it up after two or three fields (measured: 10% of the whole decode).

  /** Unsigned little-endian integer of 1, 2, 4 or 8 bytes (8: exact below 2^53). */
  u(size: number): number {
    const p = this.pos;
    if (p + size <= this.end) {
      const b = this.buf;
      if (size === 4) {
        this.pos = p + 4;
        return (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
      }
      if (size === 2) {
        this.pos = p + 2;
        return b[p] | (b[p + 1] << 8);
      }
      if (size === 1) {
        this.pos = p + 1;
        return b[p];
      }
    }
    return this.uncommonU(size);
  }

  /** `u` of a size other than 1, 2 and 4, or of one that does not fit. */
  private uncommonU(size: number): number {
    if (this.remaining < size) {
      this.fail(size, 'uint');
      this.hi = 0;
      this.lo = 0;
      return 0;
    }
    const b = this.buf;
    const p = this.pos;
    this.pos = p + size;
    // 8 bytes; QSPY would assert on other sizes, read them as little-endian anyway.
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < size && i < 8; i++) {
      if (i < 4) lo += b[p + i] * 2 ** (8 * i);
      else hi += b[p + i] * 2 ** (8 * (i - 4));
    }
    this.lo = lo;
    this.hi = hi;
    return hi * TWO_32 + lo;
  }

  /** Signed little-endian integer of 1, 2 or 4 bytes. */
  i(size: number): number {
    if (this.remaining < size) {
      this.fail(size, 'int');
      return 0;
    }
    const v = this.u(size);
    if (size === 1) return (v << 24) >> 24;
    if (size === 2) return (v << 16) >> 16;
    return v | 0;
  }

  /** A pointer of `size` bytes as a dictionary key; its halves are left in `hi` / `lo`. */
  ptr(size: number): QsKey {
    const p = this.pos;
    if (size === 8 && p + 8 <= this.end) {
      const b = this.buf;
      const lo = (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;
      const hi = (b[p + 4] | (b[p + 5] << 8) | (b[p + 6] << 16) | (b[p + 7] << 24)) >>> 0;
      this.lo = lo;
      this.hi = hi;
      this.pos = p + 8;
      return hi === 0 ? lo : makeKey(hi, lo);
    }
    return this.uncommonPtr(size);
  }

  /** `ptr` of a size other than 8, or of 8 bytes that do not fit. */
  private uncommonPtr(size: number): QsKey {
    if (size === 8) {
      this.fail(8, 'uint');
      this.hi = 0;
      this.lo = 0;
      return 0;
    }
    const v = this.u(size);
    this.lo = v;
    this.hi = 0;
    return v;
  }

  /** 64-bit unsigned value as a bigint. */
  u64(): bigint {
    this.ptr(8);
    return (BigInt(this.hi) << 32n) | BigInt(this.lo);
  }

  /** 64-bit signed value as a bigint. */
  i64(): bigint {
    if (this.remaining < 8) {
      this.fail(8, 'int');
      return 0n;
    }
    return BigInt.asIntN(64, this.u64());
  }

  /**
   * Zero-terminated string, bytes as Latin-1 (one char per byte). Returns `''` (two
   * apostrophes) for an empty string, as QSPY does; `raw` receives the real value.
   */
  str(): string {
    const b = this.buf;
    // QSPY peeks at the byte even when nothing remains (then it is the checksum).
    if (b[this.pos] === 0) {
      this.pos++;
      this.lastStr = '';
      return "''";
    }
    const end = this.end;
    // FNV-1a; the offset basis as an int32, or the loop would run on doubles.
    let hash = 0x811c9dc5 | 0;
    for (let p = this.pos; p < end; p++) {
      const c = b[p];
      if (c === 0) {
        const s = internLatin1(b, this.pos, p, hash);
        this.pos = p + 1;
        this.lastStr = s;
        return s;
      }
      hash = Math.imul(hash ^ c, 0x01000193);
    }
    this.errors += `   <COMMS> ERROR    ${this.remaining} more bytes needed for string\n`;
    this.failed();
    this.lastStr = '';
    return '';
  }

  /** The real value of the last string read (`str()` returns `''` for an empty one). */
  lastStr = '';

  /**
   * Memory block: count byte, then count items of `size` bytes. Returns the offset of the items
   * and leaves the count in `count`; -1 when it does not fit (QSPY compares the count, not count×size).
   */
  mem(size: number): number {
    if (this.remaining >= 1 && this.buf[this.pos] <= this.remaining) {
      const count = this.buf[this.pos];
      const start = this.pos + 1;
      this.count = count;
      this.pos += 1 + count * size;
      return start;
    }
    this.errors += `   <COMMS> ERROR    ${this.remaining} more bytes needed for memory-dump\n`;
    this.failed();
    this.count = 0;
    return -1;
  }

  count = 0;
}

export function latin1(b: Uint8Array, start: number, end: number): string {
  if (end - start <= 64) return String.fromCharCode.apply(null, b.subarray(start, end) as unknown as number[]);
  return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1');
}

/**
 * Strings of a trace repeat (names, states, messages): the last string seen per hash slot is
 * kept, so that a repeated one costs a comparison instead of a new string.
 */
const INTERN_SLOTS = 4096;
const internTable: string[] = new Array(INTERN_SLOTS).fill('');

function internLatin1(b: Uint8Array, start: number, end: number, hash: number): string {
  const len = end - start;
  if (len > 64) return latin1(b, start, end);
  const slot = (hash ^ len) & (INTERN_SLOTS - 1);
  const known = internTable[slot];
  if (known.length === len) {
    let same = true;
    for (let i = 0; i < len; i++) {
      if (known.charCodeAt(i) !== b[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return known;
  }
  const s = latin1(b, start, end);
  internTable[slot] = s;
  return s;
}
