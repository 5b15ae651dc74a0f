/**
 * printf-style helpers that reproduce QSPY's C formats exactly, built from lookup tables so
 * that a record's line costs a few string concatenations.
 */

import { LineParts } from './line-parts.js';

/** Written by `flat`, so that the conversion it makes is not optimised away. */
const flatSink = { value: 0 };

/**
 * `s`, stored by V8 as one flat string from now on. A string built by concatenation is a tree of
 * its pieces (a rope), and every copy of it (into a record's line, into the command's output)
 * walks that tree again: the kept line tail of a dispatch record, reused for most of a million
 * lines, cost a tenth of `tracehub decode`. Converting a string to a number flattens it in place.
 * The counter caches' strings go through here when they are made, a kept line tail on its first
 * reuse (PieceMemo).
 */
export function flat(s: string): string {
  flatSink.value = Number(s);
  return s;
}

/** `%02X` of every byte value. */
export const HEX2: readonly string[] = Array.from({ length: 256 }, (_, i) =>
  i.toString(16).toUpperCase().padStart(2, '0'),
);

const ZEROS = '0000000000000000000000000000000000000000';
const SPACES = '                                                                ';

/** Every prefix of ZEROS and SPACES, so that padding slices nothing per call. */
const ZERO_PREFIX: readonly string[] = Array.from({ length: ZEROS.length + 1 }, (_, n) => ZEROS.slice(0, n));
const SPACE_PREFIX: readonly string[] = Array.from({ length: SPACES.length + 1 }, (_, n) => SPACES.slice(0, n));

/** `%0<width>u` for a non-negative integer. */
export function zeroPad(value: number | bigint | string, width: number): string {
  const s = typeof value === 'number' && (value | 0) === value ? dec(value) : String(value);
  const n = width - s.length;
  return n <= 0 ? s : ZERO_PREFIX[Math.min(n, ZEROS.length)] + s;
}

/** ` %<width>s`: one space, then `s` right-aligned (how user records separate their elements). */
export function spaced(s: string, width: number): string {
  const n = width > s.length ? width - s.length + 1 : 1;
  return n <= SPACES.length ? SPACE_PREFIX[n] + s : ` ${spacePad(s, width)}`;
}

/**
 * ` %<width>d` of an integer (a user record's element with its separating space), in one
 * concatenation below 10^8: counters keep their leading digits for a long time, so the
 * padded leading part of a larger value comes from a direct-mapped cache, followed by the
 * last four digits.
 */
export function spacedDec(v: number, width: number): string {
  if (v >= 0 && v < 10000) return spaced(DEC[v], width);
  if (v < 0 && v > -10000) return spaced(negDec(-v), width);
  if (v > -100000000 && v < 100000000 && Math.floor(v) === v) {
    const hi = v < 0 ? -Math.floor(-v / 10000) : Math.floor(v / 10000);
    // `spaced(dec(v), width)` is the leading digits right-aligned to width - 4, then the rest.
    return spacedCached(hi, width - 4) + DEC4[v < 0 ? hi * 10000 - v : v - hi * 10000];
  }
  return spaced(dec(v), width);
}

const SPACED_SLOTS = 1024;
const spacedValue = new Int32Array(SPACED_SLOTS);
/** The width of each slot's rendering; -128 marks an empty slot (widths are above -5). */
const spacedWidth = new Int8Array(SPACED_SLOTS).fill(-128);
const spacedText: string[] = new Array<string>(SPACED_SLOTS).fill('');

/** `spaced(dec(v), width)` for -10^4 < v < 10^4 and -4 <= width < 16, from the cache. */
function spacedCached(v: number, width: number): string {
  const slot = (Math.imul(v, 0x9e3779b1 | 0) ^ width) >>> 22;
  if (spacedValue[slot] === v && spacedWidth[slot] === width) return spacedText[slot];
  const s = spaced(dec(v), width);
  spacedValue[slot] = v;
  spacedWidth[slot] = width;
  spacedText[slot] = s;
  return s;
}

/** `%<width>s`: right-aligned, space padded. */
export function spacePad(s: string, width: number): string {
  const n = width - s.length;
  return n <= 0 ? s : SPACE_PREFIX[Math.min(n, SPACES.length)] + s;
}

/** `%02u` of 0..99. */
const DEC2: readonly string[] = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
/** `%04u` of 0..9999. */
const DEC4: readonly string[] = Array.from({ length: 10000 }, (_, i) => String(i).padStart(4, '0'));
/**
 * The same as ASCII bytes, four a number, for text written as bytes (TextBlocks). Made by the
 * runtime from the strings: a loop of ten thousand steps at start-up is compiled on the fly,
 * which cost more than the loop.
 */
export const DEC4_BYTES: Uint8Array = Buffer.from(DEC4.join(''), 'latin1');

/**
 * `%d` of 0..-9999, made on first use: making them took 5 ms, a part of the start-up of
 * `tracehub decode`, which prints most numbers as bytes.
 */
let negDecTable: readonly string[] | undefined;
function negDec(v: number): string {
  negDecTable ??= Array.from({ length: 10000 }, (_, i) => `-${i}`);
  return negDecTable[v] as string;
}
/** `%u` of 0..9999. */
const DEC: readonly string[] = Array.from({ length: 10000 }, (_, i) => String(i));

/**
 * `%d` of an integer, from tables in groups of four digits. V8 caches the strings it makes of
 * numbers in an old-space table, so each new one outlives the next scavenge; these pieces die
 * young instead.
 */
export function dec(v: number): string {
  if (v >= 0) {
    if (v < 10000) return DEC[v];
    if (v < 100000000) {
      const hi = Math.floor(v / 10000);
      return DEC[hi] + DEC4[v - hi * 10000];
    }
    if (v < 1000000000000) {
      const hi = Math.floor(v / 100000000);
      const rest = v - hi * 100000000;
      const mid = Math.floor(rest / 10000);
      return DEC[hi] + DEC4[mid] + DEC4[rest - mid * 10000];
    }
    return String(v);
  }
  if (v > -10000) return negDec(-v);
  if (v > -100000000) {
    const hi = Math.floor(-v / 10000);
    return negDec(hi) + DEC4[-v - hi * 10000];
  }
  return v > -1000000000000 ? `-${dec(-v)}` : String(v);
}

/**
 * `%010u`: QSPY's timestamp column. Timestamps rise slowly, so the leading six digits are kept
 * from the previous call while they repeat: a timestamp usually costs one table lookup and one
 * concatenation. The state lives in the object of one decoder: kept in module-level `let`
 * bindings instead, it cost 3-5% of the whole decode (measured), and decoders shared it.
 */
export class TimestampText {
  /** The six leading digits of the last timestamp rendered, and their text. */
  private high = -1;
  private highText = '';
  /** The last timestamp rendered, and its text. */
  private last = -1;
  private lastText = '';

  of(t: number): string {
    // Records often come in bursts with one timestamp.
    if (t === this.last) return this.lastText;
    const hi = Math.floor(t / 10000);
    if (hi !== this.high || t >= 10000000000) return this.withNewHigh(t);
    const text = this.highText + DEC4[t - hi * 10000];
    this.last = t;
    this.lastText = text;
    return text;
  }

  /**
   * `of(t) + rest`, as two concatenations of existing strings: the ten digits alone are too
   * short for V8 to concatenate without copying them into a new string first.
   */
  line(t: number, rest: string): string {
    const hi = Math.floor(t / 10000);
    if (hi !== this.high || t >= 10000000000) return this.of(t) + rest;
    return this.highText + (DEC4[t - hi * 10000] + rest);
  }

  private withNewHigh(t: number): string {
    if (t >= 10000000000) return String(t);
    const hi = Math.floor(t / 10000);
    const h = Math.floor(hi / 10000);
    this.high = hi;
    this.highText = DEC2[h] + DEC4[hi - h * 10000];
    const text = this.highText + DEC4[t - hi * 10000];
    this.last = t;
    this.lastText = text;
    return text;
  }
}

/** `%08X` of the low 32 bits. */
export function hex8(v: number): string {
  return HEX2[(v >>> 24) & 0xff] + HEX2[(v >>> 16) & 0xff] + HEX2[(v >>> 8) & 0xff] + HEX2[v & 0xff];
}

/** `%016llX` of a 64-bit value given as two 32-bit halves. */
export function hex16(hi: number, lo: number): string {
  return hex8(hi) + hex8(lo);
}

/** `%0<width>X` (hex digits zero-padded to width; width 0 = no padding). */
export function hexPad(v: number | bigint, width: number): string {
  return zeroPad(v.toString(16).toUpperCase(), width);
}

/**
 * Renderings of recent floats, direct-mapped by their bits, type, width and precision: trace
 * values repeat, and formatting one is not cheap. A slot holds the last float that hashed to it.
 */
const FLOAT_SLOTS = 4096;
const floatLo = new Int32Array(FLOAT_SLOTS);
const floatHi = new Int32Array(FLOAT_SLOTS);
const floatSpec = new Int32Array(FLOAT_SLOTS).fill(-1);
const floatText: string[] = new Array<string>(FLOAT_SLOTS).fill('');

/**
 * ` ` + `formatExp` (a user record's element with its separating space) of a float given with
 * its bits as well: `lo`, `hi` are the two 32-bit halves of an F64 (`is64`), or `lo` the bits
 * of an F32 (and `hi` 0).
 */
export function spacedExpOfBits(
  value: number,
  lo: number,
  hi: number,
  is64: boolean,
  width: number,
  precision: number,
): string {
  const spec = ((width & 0xff) << 8) | (precision & 0xff) | (is64 ? 0x10000 : 0);
  const l = lo | 0;
  const h = hi | 0;
  const slot = Math.imul(l ^ Math.imul(h ^ spec, 0x9e3779b1), 0x85ebca6b) >>> 20;
  if (floatSpec[slot] === spec && floatLo[slot] === l && floatHi[slot] === h && width < 256 && precision < 256) {
    return floatText[slot];
  }
  const s = ` ${formatExp(value, width, precision)}`;
  floatSpec[slot] = spec;
  floatLo[slot] = l;
  floatHi[slot] = h;
  floatText[slot] = s;
  return s;
}

/** `%<width>.<precision>e` as C prints it (exponent at least two digits). */
function formatExp(value: number, width: number, precision: number): string {
  let s: string;
  if (Number.isNaN(value)) s = 'nan';
  else if (!Number.isFinite(value)) s = value < 0 ? '-inf' : 'inf';
  else {
    const negative = value < 0 || Object.is(value, -0);
    const a = Math.abs(value);
    s = a.toExponential(precision);
    // JS rounds an exact tie away from zero, C's printf to even. A tie needs a 5 as the first
    // dropped digit: only then look at the exact digits (kept digits sit at index 0 and
    // 2..precision+1, the first dropped one at precision+2).
    if (mayBeTie(a, s, precision) && a.toExponential(precision + 1).charCodeAt(precision + 2) === 0x35) {
      const exact = a.toExponential(Math.min(precision + 30, 100));
      const mantissaEnd = exact.indexOf('e');
      if (exact.charCodeAt(precision + 2) === 0x35 && isZeros(exact, precision + 3, mantissaEnd)) {
        const lastKept = exact.charCodeAt(precision === 0 ? 0 : precision + 1);
        if (lastKept % 2 === 0) s = exact.slice(0, precision === 0 ? 1 : precision + 2) + exact.slice(mantissaEnd);
      }
    }
    // JS writes e+0 / e-5; C writes at least two exponent digits.
    const e = s.indexOf('e');
    const exp = s.slice(e + 2);
    if (exp.length < 2) s = `${s.slice(0, e + 2)}0${exp}`;
    if (negative) s = `-${s}`;
  }
  return spacePad(s, width);
}

/** 10^0 .. 10^22, the powers of ten a double holds exactly. */
const POW10: readonly number[] = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/**
 * False only when `a` (> 0, rendered as `s` = `a.toExponential(precision)`) is surely not
 * halfway between two renderings. A tie is `a * 10^(precision + 1 - e)` being exactly an
 * integer ending in 5 of at most precision + 2 <= 15 digits; the scaling is one rounding off
 * (10^k is exact for k <= 22), which moves such an integer by less than 0.25. Whatever this
 * cannot decide cheaply answers true, and the exact digits decide.
 */
function mayBeTie(a: number, s: string, precision: number): boolean {
  if (precision > 13) return true;
  const e = s.indexOf('e');
  let exp = 0;
  for (let i = e + 2; i < s.length; i++) exp = exp * 10 + s.charCodeAt(i) - 0x30;
  if (s.charCodeAt(e + 1) === 0x2d) exp = -exp;
  const k = precision + 1 - exp;
  if (k > 22 || k < -22) return true;
  const y = k >= 0 ? a * POW10[k] : a / POW10[-k];
  return Math.abs((y % 10) - 5) < 0.25;
}

function isZeros(s: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (s.charCodeAt(i) !== 0x30) return false;
  return true;
}

/**
 * `${a}%u${b}%u${c}` of two counters (pool and reference count, free and minimum...): each
 * pair below 256 is built once, so a record's line takes one piece instead of five.
 */
export class PairText {
  /**
   * By x, then y: a row of 256 made when its first y comes. (One table of 65 536 made on first
   * use took 2-4 ms to make and fill, at every start of `tracehub decode`, against 0.1 ms for
   * 4 096 entries.)
   */
  private readonly rows: ((string | undefined)[] | undefined)[] = new Array<(string | undefined)[] | undefined>(
    256,
  ).fill(undefined);

  constructor(
    private readonly a: string,
    private readonly b: string,
    private readonly c: string,
  ) {}

  of(x: number, y: number): string {
    // The hit alone, small enough to be inlined into the record decoders.
    if ((x | y) >>> 8 === 0) {
      const row = this.rows[x];
      if (row !== undefined) {
        const s = row[y];
        if (s !== undefined) return s;
      }
    }
    return this.build(x, y);
  }

  private build(x: number, y: number): string {
    const s = this.a + dec(x) + this.b + dec(y) + this.c;
    if ((x | y) >>> 8 === 0) {
      let row = this.rows[x];
      if (row === undefined) {
        row = new Array<string | undefined>(256).fill(undefined);
        this.rows[x] = row;
      }
      row[y] = flat(s);
    }
    return s;
  }
}

/** `${a}%u${c}` of one counter, built once for each value below 256. */
export class NumText {
  private readonly cache: (string | undefined)[] = new Array<string | undefined>(256).fill(undefined);

  constructor(
    private readonly a: string,
    private readonly c: string,
  ) {}

  of(x: number): string {
    if (x >>> 8 === 0) {
      const s = this.cache[x];
      if (s !== undefined) return s;
    }
    return this.build(x);
  }

  private build(x: number): string {
    const s = this.a + dec(x) + this.c;
    if (x >>> 8 === 0) this.cache[x] = flat(s);
    return s;
  }
}

/**
 * The last line tail of a record (LineParts around its values), reused while the same values (the
 * same string objects: dictionary renderings and table entries) come again, as they do in a trace
 * where a few objects exchange a few signals. Nothing is built when they differ: the text is made
 * when it is asked for, so that a decoder writing bytes writes the parts and values instead.
 */
export class PieceMemo {
  private valid = false;
  /** The line's parts, and the values between them. */
  parts: LineParts = NO_PARTS;
  v0 = '';
  v1 = '';
  v2 = '';
  v3 = '';
  v4 = '';
  /**
   * Characters of the tail, counted once by `keep` (a line is reserved from it; counted for
   * every line, as a getter, it cost 0.9% of the instructions of `tracehub decode` on big_stress).
   */
  length = 0;
  /**
   * Whether the tail was reused since it was kept. On its first reuse its text is made flat
   * (with `flattenReused`), as a text used once is not worth it.
   */
  reused = false;
  private textValue: string | null = null;

  /**
   * @param flattenReused whether a reused text is made flat (see `flat`): for a caller that
   * copies every line (`tracehub decode`'s text); the pipeline's decoder, which does not, would
   * only pay for it.
   */
  constructor(private readonly flattenReused = false) {}

  /** Whether the tail kept is `parts` around these values (then it counts as reused). */
  same(parts: LineParts, v0: string, v1: string, v2: string, v3: string, v4: string): boolean {
    if (
      !this.valid ||
      parts !== this.parts ||
      v0 !== this.v0 ||
      v1 !== this.v1 ||
      v2 !== this.v2 ||
      v3 !== this.v3 ||
      v4 !== this.v4
    ) {
      return false;
    }
    if (!this.reused) {
      this.reused = true;
      if (this.flattenReused) flat(this.text);
    }
    return true;
  }

  keep(parts: LineParts, v0: string, v1: string, v2: string, v3: string, v4: string): void {
    this.valid = true;
    this.parts = parts;
    this.v0 = v0;
    this.v1 = v1;
    this.v2 = v2;
    this.v3 = v3;
    this.v4 = v4;
    this.length = parts.length + v0.length + v1.length + v2.length + v3.length + v4.length;
    this.reused = false;
    this.textValue = null;
  }

  /** The tail's text. */
  get text(): string {
    if (this.textValue === null) this.textValue = this.parts.join(this.v0, this.v1, this.v2, this.v3, this.v4);
    return this.textValue;
  }
}

const NO_PARTS = new LineParts('');
