import type { DecodedRecord } from '@tracehub/contracts';
import { QsRecordId as Id, QS_RECORD_NAMES } from './constants.js';
import { dec, NumText, PairText } from './format.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, NO_TS, POOL_REF, type RecordParser, readPoolRef } from './record-context.js';
import { parseUnknown } from './unknown-record.js';

/**
 * The active objects' and raw event queues' records (spec 5): posts, gets, deferring and
 * recalling events, subscriptions; with the layouts these ids had before QS 4.2 and 6.2.
 * Active-object posts are among the most frequent records.
 */

const QUE_MIN = new PairText(',Que<Free=', ',Min=', '>');
const QUE_MAR = new PairText(',Que<Free=', ',Mar=', '>');
const QUE_FREE = new NumText(',Que<Free=', '>');
const ACTIVE_POST = new LineParts(' AO-Post  Sdr=', ',Obj=', ',Evt<Sig=');
const ACTIVE_POST_ATTEMPT = new LineParts(' AO-PostA Sdr=', ',Obj=', ',Evt<Sig=');
const DEFER = new LineParts(' AO-Defer Obj=', ',Que=', ',Evt<Sig=');
const RECALL = new LineParts(' AO-RCall Obj=', ',Que=', ',Evt<Sig=');
const DEFER_ATTEMPT = new LineParts(' AO-DefrA Obj=', ',Que=', ',Evt<Sig=');
const SUBSCRIBE = new LineParts(' AO-Subsc Obj=', ',Sig=');
const UNSUBSCRIBE = new LineParts(' AO-Unsub Obj=', ',Sig=');
const AO_GET = new LineParts(' AO-Get   Obj=', ',Evt<Sig=');
const EQ_GET = new LineParts(' EQ-Get   Obj=', ',Evt<Sig=');
const AO_GET_LAST = new LineParts(' AO-GetL  Obj=', ',Evt<Sig=');
const EQ_GET_LAST = new LineParts(' EQ-GetL  Obj=', ',Evt<Sig=');

/** The lines of the posts to a queue other than an active object's FIFO, by record id. */
const QUEUE_POST: readonly LineParts[] = (() => {
  const tags = new Array<string>(Id.QS_USER).fill('');
  tags[Id.QS_QF_ACTIVE_POST_LIFO] = 'AO-LIFO ';
  tags[Id.QS_QF_EQUEUE_POST] = 'EQ-Post ';
  tags[Id.QS_QF_EQUEUE_POST_LIFO] = 'EQ-LIFO'; // one space after LIFO (spec 5)
  tags[Id.QS_QF_EQUEUE_POST_ATTEMPT] = 'EQ-PostA';
  return tags.map((tag) => new LineParts(` ${tag} Obj=`, ',Evt<Sig='));
})();

/** Id 81: QS_QF_ACTIVE_DEFER_ATTEMPT from QS 8.0, laid out as a defer; reserved before. */
export const parseDeferAttempt: RecordParser = (d, r, c, id, raw) => {
  return c.version >= 800 ? parseDeferRecall(d, r, c, id, raw) : parseUnknown(d, r, c, id, raw);
};

/** QS_QF_ACTIVE_DEFER and _RECALL (ids 10 and 11 from QS 6.2): an event put aside or taken back. */
export const parseDeferRecall: RecordParser = (d, r, c, id, raw) => {
  if (c.version < 620) return id === Id.QS_QF_ACTIVE_RECALL ? parseActiveRemove(d, r, c, id, raw) : silent(id, raw);
  const t = r.u(c.timeSize);
  const ao = r.ptr(c.objPtrSize);
  const q = r.ptr(c.objPtrSize);
  const s = r.u(c.sigSize);
  const poolRef = readPoolRef(r, false);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const parts = id === Id.QS_QF_ACTIVE_DEFER ? DEFER : id === Id.QS_QF_ACTIVE_RECALL ? RECALL : DEFER_ATTEMPT;
  if (d.lineAgain(t, parts, ao, q, 0, s, pool, ref)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(ao);
  const sigF = d.sigF(s, ao);
  const text = d.partsLine(t, parts, d.obj(ao), d.secondObj(ao, q), d.sig(s, ao), POOL_REF.of(pool, ref));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = { obj: objF, queue: d.objF(q), sig: sigF, pool, ref };
  return d.done(id, 'record', t, text, fields, raw, { obj: objF, sig: sigF });
};

/** QS_QF_ACTIVE_SUBSCRIBE and _UNSUBSCRIBE. */
export const parseSubscribe: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const parts = id === Id.QS_QF_ACTIVE_SUBSCRIBE ? SUBSCRIBE : UNSUBSCRIBE;
  if (d.lineAgain(t, parts, o, 0, 0, s, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const text = d.partsLine(t, parts, d.obj(o), d.sig(s, o));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, sig: sigF }, raw, { obj: objF, sig: sigF });
};

/**
 * QS_QF_ACTIVE_POST and _POST_ATTEMPT: an event posted to an active object's queue. Its line's
 * tail is kept while its pieces repeat (`activePostText`).
 */
export const parseActivePost: RecordParser = (d, r, c, id, raw) => {
  if (c.version < 420) return parseActivePostBefore42(d, r, c, id, raw);
  const t = r.u(c.timeSize);
  const sdr = r.ptr(c.objPtrSize);
  const s = r.u(c.sigSize);
  const ao = r.ptr(c.objPtrSize);
  const pool = r.u(1);
  const ref = r.u(1);
  const free = r.u(c.queueCtrSize);
  const min = r.u(c.queueCtrSize);
  const post = id === Id.QS_QF_ACTIVE_POST;
  const parts = post ? ACTIVE_POST : ACTIVE_POST_ATTEMPT;
  if (d.lineAgain(t, parts, sdr, ao, free, s, pool * 256 + ref, min))
    return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const sdrN = d.objNames(sdr);
  const aoN = d.objNames(ao);
  const sigF = d.sigF(s, ao);
  const sigT = d.sig(s, ao);
  const poolText = POOL_REF.of(pool, ref);
  const que = (post ? QUE_MIN : QUE_MAR).of(free, min);
  const m = d.activePostText;
  if (!m.same(parts, sdrN.text, aoN.text, sigT, poolText, que)) m.keep(parts, sdrN.text, aoN.text, sigT, poolText, que);
  const text = d.memoLine(t, m);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = post
    ? { sender: sdrN.field, obj: aoN.field, sig: sigF, pool, ref, free, min }
    : { sender: sdrN.field, obj: aoN.field, sig: sigF, pool, ref, free, margin: min };
  return d.done(id, 'record', t, text, fields, raw, { obj: aoN.field, sig: sigF });
};

/** QS_QF_ACTIVE_POST_LIFO and QS_QF_EQUEUE_POST, _POST_LIFO and _POST_ATTEMPT. */
export const parseQueuePost: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const poolRef = readPoolRef(r, c.version < 420);
  const free = r.u(c.queueCtrSize);
  const min = r.u(c.queueCtrSize);
  const parts = QUEUE_POST[id];
  if (d.lineAgain(t, parts, o, free, min, s, poolRef, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const attempt = id === Id.QS_QF_EQUEUE_POST_ATTEMPT;
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const que = (attempt ? QUE_MAR : QUE_MIN).of(free, min);
  const text = d.partsLine(t, parts, d.obj(o), d.sig(s, o), POOL_REF.of(pool, ref), que);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = attempt
    ? { obj: objF, sig: sigF, pool, ref, free, margin: min }
    : { obj: objF, sig: sigF, pool, ref, free, min };
  return d.done(id, 'record', t, text, fields, raw, { obj: objF, sig: sigF });
};

/** QS_QF_ACTIVE_GET and QS_QF_EQUEUE_GET: an event taken from a queue. */
export const parseQueueGet: RecordParser = (d, r, c, id, raw) => {
  const parts = id === Id.QS_QF_ACTIVE_GET ? AO_GET : EQ_GET;
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const poolRef = readPoolRef(r, c.version < 420);
  const free = r.u(c.queueCtrSize);
  if (d.lineAgain(t, parts, o, 0, 0, s, poolRef, free)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const text = d.partsLine(t, parts, d.obj(o), d.sig(s, o), POOL_REF.of(pool, ref), QUE_FREE.of(free));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, sig: sigF, pool, ref, free }, raw, { obj: objF, sig: sigF });
};

/** QS_QF_ACTIVE_GET_LAST and QS_QF_EQUEUE_GET_LAST: the last event taken from a queue. */
export const parseQueueGetLast: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const poolRef = readPoolRef(r, c.version < 420);
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const parts = id === Id.QS_QF_ACTIVE_GET_LAST ? AO_GET_LAST : EQ_GET_LAST;
  if (d.lineAgain(t, parts, o, 0, 0, s, pool, ref)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const text = d.partsLine(t, parts, d.obj(o), d.sig(s, o), POOL_REF.of(pool, ref));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, sig: sigF, pool, ref }, raw, { obj: objF, sig: sigF });
};

/** QS_QF_ACTIVE_RECALL_ATTEMPT (id 18 from QS 6.2): a recall from an empty queue. */
export const parseRecallAttempt: RecordParser = (d, r, c, id, raw) => {
  if (c.version < 620) return parseQueueInit(d, r, c, id, raw);
  const t = r.u(c.timeSize);
  const ao = r.ptr(c.objPtrSize);
  const q = r.ptr(c.objPtrSize);
  const objF = d.objF(ao);
  const text = d.tsLine(t, ` AO-RCllA Obj=${d.obj(ao)},Que=${d.secondObj(ao, q)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, queue: d.objF(q) }, raw, { obj: objF });
};

/**
 * A record QSPY reads nothing of and prints nothing for (id 10 before QS 6.2: its
 * QS_QF_ACTIVE_ADD branch only runs for id 11), so no length check either.
 */
function silent(id: number, raw: Uint8Array): DecodedRecord {
  return { kind: 'record', type: id, name: QS_RECORD_NAMES[id], targetTs: null, fields: {}, text: '', raw };
}

/** Id 11 before QS 6.2: QS_QF_ACTIVE_REMOVE. */
const parseActiveRemove: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const o = r.ptr(c.objPtrSize);
  const prio = r.u(1);
  const objF = d.objF(o);
  const text = d.tsLine(t, ` AO-Remov Obj=${d.obj(o)},Pri=${dec(prio)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, prio }, raw, { obj: objF, prio });
};

/** Id 18 before QS 6.2: QS_QF_EQUEUE_INIT. */
const parseQueueInit: RecordParser = (d, r, c, id, raw) => {
  const o = r.ptr(c.objPtrSize);
  const len = r.u(c.queueCtrSize);
  const objF = d.objF(o);
  const text = `${NO_TS}EQ-Init  Obj=${d.obj(o)},Len=${dec(len)}`;
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  return d.done(id, 'record', null, text, { obj: objF, length: len }, raw, { obj: objF });
};

/** Ids 14 and 45 before QS 4.2: no sender, pool and ref in one byte. */
const parseActivePostBefore42: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const ao = r.ptr(c.objPtrSize);
  const poolRef = readPoolRef(r, true);
  const free = r.u(c.queueCtrSize);
  const min = r.u(c.queueCtrSize);
  const post = id === Id.QS_QF_ACTIVE_POST;
  const pool = poolRef >> 8;
  const ref = poolRef & 0xff;
  const objF = d.objF(ao);
  const sigF = d.sigF(s, ao);
  const que = (post ? QUE_MIN : QUE_MAR).of(free, min);
  const poolText = POOL_REF.of(pool, ref);
  const tag = post ? 'AO-Post ' : 'AO-PostA';
  const text = d.tsLine(t, ` ${tag} Sdr=${d.obj(0)},Obj=${d.obj(ao)},Evt<Sig=${d.sig(s, ao)}${poolText}${que}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = post
    ? { sender: d.objF(0), obj: objF, sig: sigF, pool, ref, free, min }
    : { sender: d.objF(0), obj: objF, sig: sigF, pool, ref, free, margin: min };
  return d.done(id, 'record', t, text, fields, raw, { obj: objF, sig: sigF });
};
