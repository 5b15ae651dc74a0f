import type { QsTargetConfig } from './config.js';
import type { QsDictionaries } from './dictionaries.js';
import { renderUnknownKey } from './dictionaries.js';
import { HEX2, hexPad, spacedDec, spacedExpOfBits, spacePad } from './format.js';
import type { PayloadReader } from './reader.js';
import type { TextBlocks } from './text-blocks.js';

/** Data element type codes of the format byte's low nibble (spec 8.1). */
export const QsUserType = {
  I8_ENUM: 0x0,
  U8: 0x1,
  I16: 0x2,
  U16: 0x3,
  I32: 0x4,
  U32: 0x5,
  F32: 0x6,
  F64: 0x7,
  STR: 0x8,
  MEM: 0x9,
  SIG: 0xa,
  OBJ: 0xb,
  FUN: 0xc,
  I64: 0xd,
  U64: 0xe,
  U32_HEX: 0xf,
} as const;

/** The width nibble that means hexadecimal for unsigned types (QS_HEX_FMT). */
const HEX_FMT = 0xf;
/** QSPY 7.4 builds the line in a 992-byte buffer: at most 991 characters survive. */
const LINE_MAX = 992;
/** QSPY 8.x's buffer holds 65 520: no line of a 512-byte record reaches its end. */
const LINE_MAX_8X = 65520;
/** `%<a>.<b>e` per width nibble (spec 8.2). */
const EXP_WIDTH = [7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23];
const EXP_PRECISION = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

const f32 = new Float32Array(1);
const f32u = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1);
const f64u = new Uint32Array(f64.buffer);

/**
 * The decoded elements of a user record: `types[i]` (U8, I16, F32, STR, MEM, SIG, OBJ, FUN,
 * ENUM...) says what `values[i]` is. 64-bit integers are bigints, MEM blocks byte arrays,
 * SIG elements `{ sig, obj }`, objects and functions their names (or addresses).
 */
export interface QsUserElements {
  types: string[];
  values: unknown[];
}

/** Type names of the elements, by type code (I8 and ENUM share code 0). */
const TYPE_NAMES = [
  'I8',
  'U8',
  'I16',
  'U16',
  'I32',
  'U32',
  'F32',
  'F64',
  'STR',
  'MEM',
  'SIG',
  'OBJ',
  'FUN',
  'I64',
  'U64',
  'U32_HEX',
];
/** Bytes of the value of the fixed-size integer types (0: not one of them). */
const INT_SIZE = [1, 1, 2, 2, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];

/**
 * Decodes the elements of application-specific records and renders them like QSPY
 * (`QSpyRecord_processUser`): one space, then the value, per element.
 *
 * The elements are collected in scratch arrays that live as long as the decoder, and each
 * record gets arrays of exactly its size at the end: pushing onto fresh empty arrays grows
 * each of them once per record, which cost more than the rest of an integer element.
 */
export class QsUserElementsDecoder {
  private readonly types: string[] = [];
  private readonly values: unknown[] = [];
  private count = 0;
  /** The last string element, and the same with its separating space. */
  private lastStr = '';
  private lastStrSpaced = ' ';

  /**
   * `head` is the line so far (timestamp and record name). Returns the text (possibly several
   * lines when an element is truncated); `elements()` gives what was decoded.
   */
  decode(r: PayloadReader, head: string, config: QsTargetConfig, dicts: QsDictionaries): string {
    const types = this.types;
    const values = this.values;
    let n = 0;
    let line = head;
    let errorLines = '';
    const lineMax = config.version >= 800 ? LINE_MAX_8X : LINE_MAX;
    while (r.remaining > 0) {
      // The loop condition leaves a byte for the format: read it without a bounds check.
      const fmt = r.buf[r.pos];
      r.pos++;
      const type = fmt & 0x0f;
      const width = fmt >>> 4;
      const errBefore = r.errors.length;
      // The element's text, and in `sp` the same with its separating space where that is built
      // in one go (then `s` is left empty).
      let s = '';
      let sp = '';
      let value: unknown;
      let typeName = TYPE_NAMES[type];
      switch (type) {
        case QsUserType.I8_ENUM:
          if ((width & 0x8) === 0) {
            const v = r.i(1);
            sp = spacedDec(v, width);
            value = v;
          } else {
            const v = r.u(1);
            const name = dicts.enums[width & 0x7].find(v);
            s = name ?? renderUnknownKey(v, 1);
            typeName = 'ENUM';
            value = name ?? v;
          }
          break;
        case QsUserType.U8:
        case QsUserType.U16:
        case QsUserType.U32: {
          const size = INT_SIZE[type];
          const v = r.u(size);
          if (width === HEX_FMT) s = `0x${hexPad(v, size * 2)}`;
          else sp = spacedDec(v, width);
          value = v;
          break;
        }
        case QsUserType.I16:
        case QsUserType.I32: {
          const v = r.i(INT_SIZE[type]);
          sp = spacedDec(v, width);
          value = v;
          break;
        }
        case QsUserType.F32: {
          const bits = r.u(4);
          f32u[0] = bits;
          const v = f32[0];
          sp = spacedExpOfBits(v, bits, 0, false, EXP_WIDTH[width], EXP_PRECISION[width]);
          value = v;
          break;
        }
        case QsUserType.F64: {
          r.u(8);
          f64u[0] = r.lo;
          f64u[1] = r.hi;
          const v = f64[0];
          sp = spacedExpOfBits(v, r.lo, r.hi, true, EXP_WIDTH[width], EXP_PRECISION[width]);
          value = v;
          break;
        }
        case QsUserType.STR:
          s = r.str();
          value = r.lastStr;
          // Strings from the target are interned, so the same one comes back as the same object.
          if (s !== this.lastStr) {
            this.lastStr = s;
            this.lastStrSpaced = ` ${s}`;
          }
          sp = this.lastStrSpaced;
          break;
        case QsUserType.MEM: {
          const start = r.mem(1);
          const count = r.count;
          const b = r.buf;
          for (let i = 0; i < count; i++) s += ` ${HEX2[b[start + i]]}`;
          value = b.slice(start, start + count);
          break;
        }
        case QsUserType.SIG: {
          const sig = r.u(config.sigSize);
          const obj = r.ptr(config.objPtrSize);
          const sigName = dicts.sig.get(sig, obj);
          s = obj !== 0 ? `${sigName},Obj=${dicts.obj.get(obj)}` : sigName;
          value = {
            sig: dicts.sig.findName(sig, obj) ?? String(sig),
            obj: objectName(dicts, obj, config.objPtrSize),
          };
          break;
        }
        case QsUserType.OBJ: {
          const obj = r.ptr(config.objPtrSize);
          s = dicts.obj.get(obj);
          value = objectName(dicts, obj, config.objPtrSize);
          break;
        }
        case QsUserType.FUN: {
          const fun = r.ptr(config.funPtrSize);
          s = dicts.fun.get(fun);
          value = dicts.fun.find(fun) ?? renderKnownSize(fun, config.funPtrSize);
          break;
        }
        case QsUserType.I64: {
          const v = r.i64();
          const vs = v.toString();
          s = width === 9 ? vs : spacePad(vs, 2 * (width + 1));
          value = v;
          break;
        }
        case QsUserType.U64: {
          const v = r.u64();
          s =
            width === HEX_FMT
              ? `0x${spacePad(v.toString(16).toUpperCase(), 16)}`
              : spacePad(v.toString(), 2 * (width + 1));
          value = v;
          break;
        }
        default: {
          // 0xF: the former QS_U32_HEX_T, `0x%0<w>lX`.
          const v = r.u(4);
          s = `0x${hexPad(v, width)}`;
          value = v;
          break;
        }
      }
      types[n] = typeName;
      values[n] = value;
      n++;
      if (r.errors.length !== errBefore) {
        // QSPY printed the error line over its line buffer, then appended this element's (zero)
        // value to the error text, and prints that as the record's line (spec 8.2, "Details").
        // (A SIG element can fail twice: the buffer holds the last error.)
        const errors = r.errors.slice(errBefore);
        errorLines += errors;
        const err = errors.slice(errors.lastIndexOf('\n', errors.length - 2) + 1, -1);
        line = appendAt(err, sp !== '' ? sp.slice(1) : s, lineMax);
        break;
      }
      line = appendAt(line, sp !== '' ? sp : ` ${s}`, lineMax);
    }
    this.count = n;
    return errorLines + line;
  }

  /** The elements of the last record decoded, in new arrays of their own. */
  elements(): QsUserElements {
    const n = this.count;
    if (n === 0) return { types: [], values: [] };
    const t = this.types;
    const v = this.values;
    // Literals of the exact size for the usual few elements; longer records copy a slice.
    switch (n) {
      case 1:
        return { types: [t[0]], values: [v[0]] };
      case 2:
        return { types: [t[0], t[1]], values: [v[0], v[1]] };
      case 3:
        return { types: [t[0], t[1], t[2]], values: [v[0], v[1], v[2]] };
      case 4:
        return { types: [t[0], t[1], t[2], t[3]], values: [v[0], v[1], v[2], v[3]] };
      case 5:
        return { types: [t[0], t[1], t[2], t[3], t[4]], values: [v[0], v[1], v[2], v[3], v[4]] };
      case 6:
        return { types: [t[0], t[1], t[2], t[3], t[4], t[5]], values: [v[0], v[1], v[2], v[3], v[4], v[5]] };
      default:
        return { types: t.slice(0, n), values: v.slice(0, n) };
    }
  }
}

/** The longest string element written as bytes; a longer one takes the string path. */
const STR_BYTES_MAX = 512;
/** Bytes a user record's line written as bytes may need after its head. */
export const USER_LINE_ROOM = LINE_MAX + STR_BYTES_MAX + 32;

/**
 * Writes the elements of a user record into `out` as bytes, as `QsUserElementsDecoder.decode`
 * renders them, for the usual elements: integers (decimal, and the hex of U8..U32), floats and
 * strings. Returns false, with `r` and `out` where they got to, at the first element it leaves
 * to `decode` (any other type, one that does not fit the payload, a line reaching QSPY's
 * buffer size): the caller then takes back the line and decodes the record as a string.
 * `lineStart` is where the line (its timestamp) starts in `out.bytes`.
 */
export function writeUserElements(r: PayloadReader, out: TextBlocks, lineStart: number): boolean {
  // Each way of writing an element is called from one place (TurboFan inlines a callee at every
  // call site): the integers share one spacedDec, the floats one spacedExpOfBits.
  while (r.remaining > 0) {
    const fmt = r.buf[r.pos];
    r.pos++;
    const type = fmt & 0x0f;
    const width = fmt >>> 4;
    const size = INT_SIZE[type];
    if (size !== 0) {
      // I8 (or an enum, left to `decode`), U8, I16, U16, I32, U32: the signed ones are the even types.
      if (r.remaining < size || (type === QsUserType.I8_ENUM && (width & 0x8) !== 0)) return false;
      if ((type & 1) === 0) {
        out.spacedDec(r.i(size), width);
      } else if (width !== HEX_FMT) {
        out.spacedDec(r.u(size), width);
      } else {
        out.latin1(' 0x');
        out.hex(r.u(size), size * 2);
      }
    } else if (type === QsUserType.F32 || type === QsUserType.F64) {
      const is64 = type === QsUserType.F64;
      if (r.remaining < (is64 ? 8 : 4)) return false;
      let value: number;
      let lo: number;
      let hi: number;
      if (is64) {
        r.u(8);
        lo = r.lo;
        hi = r.hi;
        f64u[0] = lo;
        f64u[1] = hi;
        value = f64[0];
      } else {
        lo = r.u(4);
        hi = 0;
        f32u[0] = lo;
        value = f32[0];
      }
      out.latin1(spacedExpOfBits(value, lo, hi, is64, EXP_WIDTH[width], EXP_PRECISION[width]));
    } else if (type === QsUserType.STR) {
      const s = r.str();
      if (r.errors !== '' || s.length > STR_BYTES_MAX) return false;
      out.latin1(' ');
      out.latin1(s);
    } else {
      return false;
    }
    // QSPY 7.4 cuts what reaches the end of its line buffer (appendAt): `decode` does that
    // (and knows QSPY 8.x's longer one).
    if (out.length - lineStart >= LINE_MAX - 1) return false;
  }
  return true;
}

function objectName(dicts: QsDictionaries, key: number | string, size: number): string {
  return dicts.obj.find(key) ?? renderKnownSize(key, size);
}

/** An address rendered with the target's real pointer size (for fields, not for QSPY's text). */
function renderKnownSize(key: number | string, size: number): string {
  return key === 0 ? 'NULL' : renderUnknownKey(key, size <= 4 ? 4 : 8);
}

/** `snprintf` at the end of QSPY's line buffer: an element that does not fit is cut. */
function appendAt(line: string, s: string, lineMax: number): string {
  const avail = lineMax - 1 - line.length;
  if (s.length < avail) return line + s;
  return line + s.slice(0, Math.max(avail - 1, 0));
}
