import type { QsTargetConfig } from './config.js';
import type { QsDictionaries } from './dictionaries.js';
import { renderUnknownKey } from './dictionaries.js';
import { dec, formatExpOfBits, HEX2, hexPad, spaced, spacePad } from './format.js';
import type { PayloadReader } from './reader.js';

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
/** QSPY builds the line in a 992-byte buffer: at most 991 characters survive. */
const LINE_MAX = 992;
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

/**
 * Decodes the elements of an application-specific record and renders them like QSPY
 * (`QSpyRecord_processUser`): one space, then the value, per element.
 * `head` is the line so far (timestamp and record name). Returns the text (possibly several
 * lines when an element is truncated) and fills `elements`.
 */
export function decodeUserElements(
  r: PayloadReader,
  head: string,
  config: QsTargetConfig,
  dicts: QsDictionaries,
  elements: QsUserElements,
): string {
  let line = head;
  let errorLines = '';
  while (r.remaining > 0) {
    const fmt = r.u(1);
    const width = (fmt >>> 4) & 0x0f;
    const isHex = width === HEX_FMT;
    const errBefore = r.errors.length;
    // The element's text, and in `sp` the same with its separating space where that is built
    // in one go (then `s` is left empty).
    let s = '';
    let sp = '';
    switch (fmt & 0x0f) {
      case QsUserType.I8_ENUM:
        if ((width & 0x8) === 0) {
          const v = r.i(1);
          sp = spaced(dec(v), width);
          elements.types.push('I8');
          elements.values.push(v);
        } else {
          const v = r.u(1);
          const group = width & 0x7;
          const name = dicts.enums[group].find(v);
          s = name ?? renderUnknownKey(v, 1);
          elements.types.push('ENUM');
          elements.values.push(name ?? v);
        }
        break;
      case QsUserType.U8:
      case QsUserType.U16:
      case QsUserType.U32: {
        const type = fmt & 0x0f;
        const size = type === QsUserType.U8 ? 1 : type === QsUserType.U16 ? 2 : 4;
        const v = r.u(size);
        if (isHex) s = `0x${hexPad(v, size * 2)}`;
        else sp = spaced(dec(v), width);
        elements.types.push(size === 1 ? 'U8' : size === 2 ? 'U16' : 'U32');
        elements.values.push(v);
        break;
      }
      case QsUserType.I16:
      case QsUserType.I32: {
        const size = (fmt & 0x0f) === QsUserType.I16 ? 2 : 4;
        const v = r.i(size);
        sp = spaced(dec(v), width);
        elements.types.push(size === 2 ? 'I16' : 'I32');
        elements.values.push(v);
        break;
      }
      case QsUserType.F32: {
        const bits = r.u(4);
        f32u[0] = bits;
        const v = f32[0];
        s = formatExpOfBits(v, bits, 0, false, EXP_WIDTH[width], EXP_PRECISION[width]);
        elements.types.push('F32');
        elements.values.push(v);
        break;
      }
      case QsUserType.F64: {
        r.u(8);
        f64u[0] = r.lo;
        f64u[1] = r.hi;
        const v = f64[0];
        s = formatExpOfBits(v, r.lo, r.hi, true, EXP_WIDTH[width], EXP_PRECISION[width]);
        elements.types.push('F64');
        elements.values.push(v);
        break;
      }
      case QsUserType.STR:
        s = r.str();
        elements.types.push('STR');
        elements.values.push(r.lastStr);
        break;
      case QsUserType.MEM: {
        const start = r.mem(1);
        const count = r.count;
        s = '';
        const b = r.buf;
        for (let i = 0; i < count; i++) s += ` ${HEX2[b[start + i]]}`;
        elements.types.push('MEM');
        elements.values.push(b.slice(start, start + count));
        break;
      }
      case QsUserType.SIG: {
        const sig = r.u(config.sigSize);
        const obj = r.ptr(config.objPtrSize);
        const sigName = dicts.sig.get(sig, obj);
        s = obj !== 0 ? `${sigName},Obj=${dicts.obj.get(obj)}` : sigName;
        elements.types.push('SIG');
        elements.values.push({
          sig: dicts.sig.findName(sig, obj) ?? String(sig),
          obj: objectName(dicts, obj, config.objPtrSize),
        });
        break;
      }
      case QsUserType.OBJ: {
        const obj = r.ptr(config.objPtrSize);
        s = dicts.obj.get(obj);
        elements.types.push('OBJ');
        elements.values.push(objectName(dicts, obj, config.objPtrSize));
        break;
      }
      case QsUserType.FUN: {
        const fun = r.ptr(config.funPtrSize);
        s = dicts.fun.get(fun);
        elements.types.push('FUN');
        elements.values.push(dicts.fun.find(fun) ?? renderKnownSize(fun, config.funPtrSize));
        break;
      }
      case QsUserType.I64: {
        const v = r.i64();
        const vs = v.toString();
        s = width === 9 ? vs : spacePad(vs, 2 * (width + 1));
        elements.types.push('I64');
        elements.values.push(v);
        break;
      }
      case QsUserType.U64: {
        const v = r.u64();
        s = isHex ? `0x${spacePad(v.toString(16).toUpperCase(), 16)}` : spacePad(v.toString(), 2 * (width + 1));
        elements.types.push('U64');
        elements.values.push(v);
        break;
      }
      default: {
        // 0xF: the former QS_U32_HEX_T, `0x%0<w>lX`.
        const v = r.u(4);
        s = `0x${hexPad(v, width)}`;
        elements.types.push('U32_HEX');
        elements.values.push(v);
        break;
      }
    }
    if (r.errors.length !== errBefore) {
      // QSPY printed the error into its line buffer, then appended this element at the old position.
      const err = r.errors.slice(errBefore, -1);
      errorLines += `${err}\n`;
      line = overlay(err, line.length + 1, sp !== '' ? sp.slice(1) : s);
      break;
    }
    line = appendAt(line, sp !== '' ? sp : ` ${s}`);
  }
  return errorLines + line;
}

function objectName(dicts: QsDictionaries, key: number | string, size: number): string {
  return dicts.obj.find(key) ?? renderKnownSize(key, size);
}

/** An address rendered with the target's real pointer size (for fields, not for QSPY's text). */
export function renderKnownSize(key: number | string, size: number): string {
  return key === 0 ? 'NULL' : renderUnknownKey(key, size <= 4 ? 4 : 8);
}

/** `snprintf` at the end of QSPY's line buffer: an element that does not fit is cut. */
function appendAt(line: string, s: string): string {
  const avail = LINE_MAX - 1 - line.length;
  if (s.length < avail) return line + s;
  return line + s.slice(0, Math.max(avail - 1, 0));
}

/**
 * The line QSPY prints after a truncated element: its buffer holds the error text, and the
 * element was written at the position the user line had reached, separator included
 * (spec 8.2, "Details"); the line ends at the error text's terminator when that comes first.
 */
function overlay(err: string, linePos: number, s: string): string {
  if (err.length < linePos) return err;
  return appendAt(err.slice(0, linePos), s);
}
