import type { DecodedRecord } from '@tracehub/contracts';
import type { QsTargetConfig } from './config.js';
import {
  QsRecordId as Id,
  QsObjKind as Kind,
  QS_8X_OBJ_KIND_NAMES,
  QS_OBJ_KIND_NAMES,
  QS_RX_NAMES,
  QsDecoderRecordId,
} from './constants.js';
import type { QsKey } from './dictionaries.js';
import { dec, HEX2, hexPad } from './format.js';
import type { PayloadReader } from './reader.js';
import { type Fields, NO_TS, type RecordContext, type RecordParser } from './record-context.js';

/**
 * The QUTest and control records (spec 5: TEST_PAUSED, TEST_PROBE_GET, TARGET_DONE,
 * RX_STATUS, QUERY_DATA, PEEK_DATA): rare in a trace, so apart from the hot records.
 */

export const parseTestPaused: RecordParser = (d, _r, _c, id, raw) => {
  return d.done(id, 'record', null, `${NO_TS}TstPause`, {}, raw);
};

export const parseTestProbe: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const f = r.ptr(c.funPtrSize);
  const data = r.u(4);
  // QSPY prints the data as signed (Q7); the field is the unsigned value sent.
  const text = `${d.ts.of(t)} TstProbe Fun=${d.fun(f)},Data=${data | 0}`;
  return d.done(id, 'record', t, text, { fun: d.funF(f), data }, raw);
};

export const parseTargetDone: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const rx = r.u(1);
  const name = rx < QS_RX_NAMES.length ? QS_RX_NAMES[rx] : String(rx);
  return d.done(id, 'record', t, `${d.ts.of(t)} Trg-Done ${name}`, { command: name }, raw);
};

export const parseRxStatus: RecordParser = (d, r, c, id, raw) => {
  let t: number | null = null;
  if (c.version < 580) t = r.u(c.timeSize);
  const status = r.u(1);
  let text: string;
  let fields: Fields;
  if (status < 128) {
    const name = status < QS_RX_NAMES.length ? QS_RX_NAMES[status] : String(status);
    text = `${NO_TS}Trg-Ack  ${name}`;
    fields = { ack: true, command: name };
  } else {
    const code = status & 0x7f;
    const name = code < QS_RX_NAMES.length ? QS_RX_NAMES[code] : `0x${HEX2[code]}`;
    text = `${NO_TS}Trg-ERR  ${name}`;
    fields = { ack: false, error: code, command: name };
  }
  return d.done(id, 'record', t, text, fields, raw);
};

export const parsePeekData: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const offs = r.u(2);
  const size = r.u(1);
  const start = r.mem(size);
  const num = r.count;
  const items: number[] = [];
  let data = '';
  const b = r.buf;
  // QSPY prints num-1 items with ',' and always one last item with '>' (even when num is 0).
  const shown = Math.max(num, 1);
  for (let i = 0; i < shown; i++) {
    const p = (start < 0 ? r.pos : start) + i * size;
    let v = 0;
    for (let k = size - 1; k >= 0; k--) v = v * 256 + (b[p + k] ?? 0);
    if (i < num) items.push(v);
    // Items of other sizes print nothing, not even their separators.
    if (size === 1 || size === 2 || size === 4) data += hexPad(v, size * 2) + (i === shown - 1 ? '>' : ',');
  }
  const text = `${d.ts.of(t)} Trg-Peek Offs=${dec(offs)},Size=${dec(size)},Num=${dec(num)},Data=<${data}`;
  return d.done(id, 'record', t, text, { offset: offs, size, num, data: items }, raw);
};

/**
 * QS_QUERY_DATA: the current object of a kind, as the target reports it. From QP 8.1 each kind
 * has a layout of its own (`queryData81`); before, the object comes first. QSPY 8.x prints a
 * length error of this record twice (it prints its line again after the check).
 */
export const parseQueryData: RecordParser = (d, r, c, _id, raw) => {
  const t = r.u(c.timeSize);
  const kind = r.u(1);
  if (c.version < 800) return queryDataBefore81(d, r, c, t, kind, QS_OBJ_KIND_NAMES, raw);
  const record =
    c.version < 810
      ? queryDataBefore81(d, r, c, t, kind, QS_8X_OBJ_KIND_NAMES, raw)
      : queryData81(d, r, c, t, kind, raw);
  if (record.type !== QsDecoderRecordId.QS_RECORD_LENGTH) return record;
  const text = record.text;
  return { ...record, text: `${text}\n${text.slice(text.lastIndexOf('\n') + 1)}` };
};

function kindNameOf(kind: number, names: readonly string[]): string {
  return kind < names.length ? names[kind] : String(kind);
}

/** The layouts before QP 8.1: the object, then what its kind has (before QS 6.9 AO counters). */
function queryDataBefore81(
  d: RecordContext,
  r: PayloadReader,
  c: QsTargetConfig,
  t: number,
  kind: number,
  names: readonly string[],
  raw: Uint8Array,
): DecodedRecord {
  const o = r.ptr(c.objPtrSize);
  let q: QsKey = 0;
  let b = 0;
  let cc = 0;
  let sig = 0;
  let e = 0;
  switch (kind) {
    case Kind.SM:
      q = r.ptr(c.funPtrSize);
      break;
    case Kind.MP:
      b = r.u(c.poolCtrSize);
      cc = r.u(c.poolCtrSize);
      break;
    case Kind.EQ:
      b = r.u(c.queueCtrSize);
      cc = r.u(c.queueCtrSize);
      break;
    case Kind.TE:
      q = r.ptr(c.objPtrSize);
      b = r.u(c.teCtrSize);
      cc = r.u(c.teCtrSize);
      sig = r.u(c.sigSize);
      e = r.u(1);
      break;
  }
  if (kind === Kind.AO) {
    if (c.version < 690) {
      b = r.u(c.queueCtrSize);
      cc = r.u(c.queueCtrSize);
    } else q = r.ptr(c.funPtrSize);
  }
  const kindName = kindNameOf(kind, names);
  const objF = d.objF(o);
  let text = `${d.ts.of(t)} Query-${kindName} Obj=${d.obj(o)}`;
  const fields: Fields = { kind: kindName, obj: objF };
  if (kind === Kind.SM || (kind === Kind.AO && c.version >= 690)) {
    text += `,State=${d.fun(q)}`;
    fields.state = d.funF(q);
  } else if (kind === Kind.MP) {
    text += `,Free=${dec(b)},Min=${dec(cc)}`;
    fields.free = b;
    fields.min = cc;
  } else if (kind === Kind.EQ || kind === Kind.AO) {
    text += `,Que<Free=${dec(b)},Min=${dec(cc)}>`;
    fields.free = b;
    fields.min = cc;
  } else if (kind === Kind.TE) {
    text += timeEventQuery(d, fields, q, b, cc, sig, e);
  }
  return d.done(Id.QS_QUERY_DATA, 'record', t, text, fields, raw, { obj: objF });
}

/** A time event's query (every version): its AO's signal, counters, rate and flags. */
function timeEventQuery(
  d: RecordContext,
  fields: Fields,
  ao: QsKey,
  tim: number,
  int: number,
  sig: number,
  e: number,
): string {
  Object.assign(fields, {
    ao: d.objF(ao),
    rate: e & 0x0f,
    sig: d.sigF(sig, ao),
    tim,
    interval: int,
    flags: e & 0xf0,
  });
  return `,Rate=${e & 0x0f},Sig=${d.sig(sig, ao)},Tim=${dec(tim)},Int=${dec(int)},Flags=0x${HEX2[e & 0xf0]}`;
}

/**
 * The QP 8.1 layouts: an AO by its priority with 2-byte queue counters, pools and queues with
 * 2-byte counters (use, free, min, and a pool's block size), an event pool (kind 7) by its
 * number; AP and SM_AO carry nothing more.
 */
function queryData81(
  d: RecordContext,
  r: PayloadReader,
  c: QsTargetConfig,
  t: number,
  kind: number,
  raw: Uint8Array,
): DecodedRecord {
  const kindName = kindNameOf(kind, QS_8X_OBJ_KIND_NAMES);
  const fields: Fields = { kind: kindName };
  let text = `${d.ts.of(t)} Query-${kindName}`;
  let o: QsKey | null = null;
  switch (kind) {
    case Kind.SM: {
      o = r.ptr(c.objPtrSize);
      const q = r.ptr(c.funPtrSize);
      text += ` Obj=${d.obj(o)},State=${d.fun(q)}`;
      fields.state = d.funF(q);
      break;
    }
    case Kind.AO: {
      const prio = r.u(1);
      const [use, free, min] = [r.u(2), r.u(2), r.u(2)];
      text += ` Pri=${dec(prio)},Que<Use=${dec(use)},Free=${dec(free)},Min=${dec(min)}>`;
      Object.assign(fields, { prio, use, free, min });
      break;
    }
    case Kind.MP: {
      o = r.ptr(c.objPtrSize);
      const [use, free, min, size] = [r.u(2), r.u(2), r.u(2), r.u(2)];
      text += ` Obj=${d.obj(o)},Use=${dec(use)},Free=${dec(free)},Min=${dec(min)},Size=${dec(size)}`;
      Object.assign(fields, { use, free, min, size });
      break;
    }
    case Kind.EQ: {
      o = r.ptr(c.objPtrSize);
      const [use, free, min] = [r.u(2), r.u(2), r.u(2)];
      text += ` Obj=${d.obj(o)},Use=${dec(use)},Free=${dec(free)},Min=${dec(min)}`;
      Object.assign(fields, { use, free, min });
      break;
    }
    case Kind.TE: {
      o = r.ptr(c.objPtrSize);
      const ao = r.ptr(c.objPtrSize);
      const tim = r.u(c.teCtrSize);
      const int = r.u(c.teCtrSize);
      const sig = r.u(c.sigSize);
      const e = r.u(1);
      text += ` Obj=${d.obj(o)}${timeEventQuery(d, fields, ao, tim, int, sig, e)}`;
      break;
    }
    case Kind.EP: {
      const pool = r.u(1);
      const [use, free, min, size] = [r.u(2), r.u(2), r.u(2), r.u(2)];
      text += ` Id=${dec(pool)},Use=${dec(use)},Free=${dec(free)},Min=${dec(min)},Size=${dec(size)}`;
      Object.assign(fields, { pool, use, free, min, size });
      break;
    }
  }
  if (o === null) return d.done(Id.QS_QUERY_DATA, 'record', t, text, fields, raw);
  const objF = d.objF(o);
  fields.obj = objF;
  return d.done(Id.QS_QUERY_DATA, 'record', t, text, fields, raw, { obj: objF });
}
