import { QsRecordId as Id, QsObjKind as Kind, QS_OBJ_KIND_NAMES, QS_RX_NAMES } from './constants.js';
import type { QsKey } from './dictionaries.js';
import { dec, HEX2, hexPad } from './format.js';
import { type Fields, NO_TS, type RecordParser } from './record-context.js';

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

export const parseQueryData: RecordParser = (d, r, c, _id, raw) => {
  const t = r.u(c.timeSize);
  const kind = r.u(1);
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
  const kindName = kind < QS_OBJ_KIND_NAMES.length ? QS_OBJ_KIND_NAMES[kind] : String(kind);
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
    text += `,Rate=${e & 0x0f},Sig=${d.sig(sig, q)},Tim=${dec(b)},Int=${dec(cc)},Flags=0x${HEX2[e & 0xf0]}`;
    Object.assign(fields, {
      ao: d.objF(q),
      rate: e & 0x0f,
      sig: d.sigF(sig, q),
      tim: b,
      interval: cc,
      flags: e & 0xf0,
    });
  }
  return d.done(Id.QS_QUERY_DATA, 'record', t, text, fields, raw, { obj: objF });
};
