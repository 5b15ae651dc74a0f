import { QsRecordId as Id } from './constants.js';
import { hex8, hex16, zeroPad } from './format.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, NO_TS, type RecordParser } from './record-context.js';

/**
 * The dictionary records (spec 7): the names of signals, objects, functions, user records and
 * enumerations, put into the decoder's dictionaries when the record is whole.
 */

const SIG_DICT = new LineParts(`${NO_TS}Sig-Dict `, ',Obj=0x', '->');
const OBJ_DICT = new LineParts(`${NO_TS}Obj-Dict 0x`, '->');
const FUN_DICT = new LineParts(`${NO_TS}Fun-Dict 0x`, '->');
const USR_DICT = new LineParts(`${NO_TS}Usr-Dict `, '->');

/** QS_ENUM_DICT: the name of a value of one of eight groups of enumerations. */
export const parseEnumDict: RecordParser = (d, r, _c, id, raw) => {
  const value = r.u(1);
  const group = r.u(1) & 7;
  const name = r.str();
  if (r.remaining === 0) d.dicts.enums[group].put(value, name);
  const text = `${NO_TS}Enum-Dic ${zeroPad(value, 3)},Grp=${group}->${name}`;
  if (!d.fieldsWanted) return d.done(id, 'dict', null, text, NO_FIELDS, raw);
  return d.done(id, 'dict', null, text, { value, group, name: r.lastStr }, raw);
};

/** QS_SIG_DICT: the name of a signal, of one object or of all (object 0). */
export const parseSigDict: RecordParser = (d, r, c, id, raw) => {
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const hi = r.hi;
  const lo = r.lo;
  const name = r.str();
  if (r.remaining === 0) d.dicts.sig.put(s, o, name);
  const objHex = c.objPtrSize <= 4 ? hex8(lo) : hex16(hi, lo);
  const text = d.plainLine(SIG_DICT, zeroPad(s | 0, 8), objHex, name);
  if (!d.fieldsWanted) return d.done(id, 'dict', null, text, NO_FIELDS, raw);
  return d.done(id, 'dict', null, text, { sig: s, obj: `0x${objHex}`, name: r.lastStr }, raw);
};

/** QS_OBJ_DICT and QS_FUN_DICT: the name of an object's or a function's address. */
export const parseObjFunDict: RecordParser = (d, r, c, id, raw) => {
  const isObj = id === Id.QS_OBJ_DICT;
  const size = isObj ? c.objPtrSize : c.funPtrSize;
  const k = r.ptr(size);
  const hex = size <= 4 ? hex8(r.lo) : hex16(r.hi, r.lo);
  let name = r.str();
  // Before QS 6.9 QSPY showed array objects' brackets as angle brackets.
  if (isObj && c.version < 690) name = name.replaceAll('[', '<').replaceAll(']', '>');
  if (r.remaining === 0) (isObj ? d.dicts.obj : d.dicts.fun).put(k, name);
  const text = d.plainLine(isObj ? OBJ_DICT : FUN_DICT, hex, name);
  if (!d.fieldsWanted) return d.done(id, 'dict', null, text, NO_FIELDS, raw);
  const fields = isObj ? { obj: `0x${hex}`, name: r.lastStr } : { fun: `0x${hex}`, name: r.lastStr };
  return d.done(id, 'dict', null, text, fields, raw);
};

/** QS_USR_DICT: the name of a user record. */
export const parseUsrDict: RecordParser = (d, r, _c, id, raw) => {
  const rec = r.u(1);
  const name = r.str();
  if (r.remaining === 0) d.dicts.usr.put(rec, name);
  const text = d.plainLine(USR_DICT, zeroPad(rec, 8), name);
  if (!d.fieldsWanted) return d.done(id, 'dict', null, text, NO_FIELDS, raw);
  return d.done(id, 'dict', null, text, { recId: rec, name: r.lastStr }, raw);
};
