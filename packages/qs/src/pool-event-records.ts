import { QsRecordId as Id } from './constants.js';
import { dec } from './format.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, POOL_REF, type RecordParser, readPoolRef } from './record-context.js';
import { parseTimeEvtArm } from './time-event-records.js';

/**
 * The memory pools' and events' records (spec 5): events made, published, referenced and
 * collected, and the blocks taken from and given back to their pools.
 */

const NEW = new LineParts(' QF-New   Sig=', ',Size=');
const NEW_ATTEMPT = new LineParts(' QF-NewA  Sig=', ',Size=');
const POOL_GET = new LineParts(' MP-Get   Obj=', ',Free=', ',Min=');
const POOL_GET_ATTEMPT = new LineParts(' MP-GetA  Obj=', ',Free=', ',Mar=');
const POOL_PUT = new LineParts(' MP-Put   Obj=', ',Free=');
const PUBLISH = new LineParts(' QF-Pub   Sdr=', ',Evt<Sig=');

/** The lines of the event references' records, by record id. */
const EVENT_REF: readonly LineParts[] = (() => {
  const parts: LineParts[] = [];
  parts[Id.QS_QF_NEW_REF] = new LineParts(' QF-NewRf Evt<Sig=');
  parts[Id.QS_QF_GC_ATTEMPT] = new LineParts(' QF-gcA   Evt<Sig=');
  parts[Id.QS_QF_GC] = new LineParts(' QF-gc    Evt<Sig=');
  parts[Id.QS_QF_DELETE_REF] = new LineParts(' QF-DelRf Evt<Sig=');
  return parts;
})();

/** QS_QF_NEW and _NEW_ATTEMPT: an event made (or not: no block was free). */
export const parseNew: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const size = r.u(c.eventSize);
  const s = r.u(c.sigSize);
  const parts = id === Id.QS_QF_NEW_ATTEMPT ? NEW_ATTEMPT : NEW;
  if (d.lineAgain(t, parts, 0, 0, 0, s, size, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const sigF = d.sigF(s, 0);
  const text = d.partsLine(t, parts, d.sig(s, 0), dec(size));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { sig: sigF, size }, raw, { sig: sigF });
};

/** QS_QF_MPOOL_GET and _GET_ATTEMPT: a block taken from a pool (or not: the margin was reached). */
export const parsePoolGet: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const o = r.ptr(c.objPtrSize);
  const free = r.u(c.poolCtrSize);
  const min = r.u(c.poolCtrSize);
  const get = id === Id.QS_QF_MPOOL_GET;
  const parts = get ? POOL_GET : POOL_GET_ATTEMPT;
  if (d.lineAgain(t, parts, o, 0, 0, free, min, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const text = d.partsLine(t, parts, d.obj(o), dec(free), dec(min));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, get ? { obj: objF, free, min } : { obj: objF, free, margin: min }, raw, {
    obj: objF,
  });
};

/** QS_QF_MPOOL_PUT: a block given back to its pool. */
export const parsePoolPut: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const o = r.ptr(c.objPtrSize);
  const free = r.u(c.poolCtrSize);
  if (d.lineAgain(t, POOL_PUT, o, 0, 0, free, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const text = d.partsLine(t, POOL_PUT, d.obj(o), dec(free));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, free }, raw, { obj: objF });
};

/** QS_QF_PUBLISH: an event published to its subscribers. */
export const parsePublish: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  // Before QS 4.2: no sender, and pool and ref in one byte.
  const old = c.version < 420;
  const sdr = old ? 0 : r.ptr(c.objPtrSize);
  const s = r.u(c.sigSize);
  const poolRef = readPoolRef(r, old);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  if (d.lineAgain(t, PUBLISH, sdr, 0, 0, s, pool, ref)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const sigF = d.sigF(s, 0);
  const text = d.partsLine(t, PUBLISH, d.obj(sdr), d.sig(s, 0), POOL_REF.of(pool, ref));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { sender: d.objF(sdr), sig: sigF, pool, ref }, raw, { sig: sigF });
};

/**
 * QS_QF_NEW_REF, _GC_ATTEMPT, _GC and _DELETE_REF: a reference to an event taken or dropped,
 * and the event collected (or not: it is still referenced).
 */
export const parseEventRef: RecordParser = (d, r, c, id, raw) => {
  // Before QS 6.2 id 38 was QS_QF_TIMEEVT_CTR, laid out and printed as a time-event arm.
  if (id === Id.QS_QF_DELETE_REF && c.version < 620) return parseTimeEvtArm(d, r, c, id, raw);
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  // Before QS 4.2 the garbage-collector records had pool and ref in one byte.
  const packed = c.version < 420 && (id === Id.QS_QF_GC_ATTEMPT || id === Id.QS_QF_GC);
  const poolRef = readPoolRef(r, packed);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const parts = EVENT_REF[id];
  if (d.lineAgain(t, parts, 0, 0, 0, s, pool, ref)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const sigF = d.sigF(s, 0);
  const text = d.partsLine(t, parts, d.sig(s, 0), POOL_REF.of(pool, ref));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { sig: sigF, pool, ref }, raw, { sig: sigF });
};
