import { QsRecordId as Id } from './constants.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, type RecordParser, RTC } from './record-context.js';

/**
 * The state machines' records (QEP, spec 5): state entries and exits, initial and other
 * transitions, dispatches and the events a state machine handled internally, ignored or did
 * not handle. Dispatches are the most frequent records of most traces.
 */

const ST_ENTRY = new LineParts(`${RTC}St-Entry Obj=`, ',State=');
const ST_EXIT = new LineParts(`${RTC}St-Exit  Obj=`, ',State=');
const UNHANDLED = new LineParts(`${RTC}St-Unhnd Obj=`, ',Sig=', ',State=');
const INIT_TRAN = new LineParts(' Init===> Obj=', ',State=');
const DISPATCH = new LineParts(' Disp===> Obj=', ',Sig=', ',State=');
const INTERN_TRAN = new LineParts(' =>Intern Obj=', ',Sig=', ',State=');
const IGNORED = new LineParts(' =>Ignore Obj=', ',Sig=', ',State=');
const TRAN = new LineParts(' ===>Tran Obj=', ',Sig=', ',State=', '->');

/** The lines of the state transitions without a timestamp, by record id. */
const STATE_TRAN: readonly LineParts[] = (() => {
  const tags = new Array<string>(Id.QS_USER).fill('');
  tags[Id.QS_QEP_STATE_INIT] = 'St-Init ';
  tags[Id.QS_QEP_TRAN_HIST] = 'St-Hist ';
  tags[Id.QS_QEP_TRAN_EP] = 'St-EP   ';
  tags[Id.QS_QEP_TRAN_XP] = 'St-XP   ';
  return tags.map((tag) => new LineParts(`${RTC}${tag} Obj=`, ',State=', '->'));
})();

/** QS_QEP_STATE_INIT, _TRAN_HIST, _TRAN_EP and _TRAN_XP: a step of a transition (no timestamp). */
export const parseStateTransition: RecordParser = (d, r, c, id, raw) => {
  const o = r.ptr(c.objPtrSize);
  const f1 = r.ptr(c.funPtrSize);
  const f2 = r.ptr(c.funPtrSize);
  const parts = STATE_TRAN[id];
  if (d.lineAgain(-1, parts, o, f1, f2, 0, 0, 0)) return d.done(id, 'record', null, '', NO_FIELDS, raw);
  const text = d.plainLine(parts, d.obj(o), d.fun(f1), d.fun(f2));
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  const fields = { obj: d.objF(o), source: d.funF(f1), target: d.funF(f2) };
  return d.done(id, 'record', null, text, fields, raw, { obj: d.objF(o) });
};

/** QS_QEP_INIT_TRAN: the initial transition of a state machine. */
export const parseInitTran: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const o = r.ptr(c.objPtrSize);
  const f = r.ptr(c.funPtrSize);
  if (d.lineAgain(t, INIT_TRAN, o, f, 0, 0, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const text = d.partsLine(t, INIT_TRAN, d.obj(o), d.fun(f));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: d.objF(o), state: d.funF(f) }, raw, { obj: d.objF(o) });
};

/**
 * QS_QEP_DISPATCH, _INTERN_TRAN and _IGNORED: an event dispatched, and handled without a
 * transition or ignored. Its line's tail is kept while its pieces repeat (`dispatchText`).
 */
export const parseDispatchLike: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const f = r.ptr(c.funPtrSize);
  const parts = id === Id.QS_QEP_INTERN_TRAN ? INTERN_TRAN : id === Id.QS_QEP_IGNORED ? IGNORED : DISPATCH;
  if (d.lineAgain(t, parts, o, f, 0, s, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const on = d.objNames(o);
  const sigF = d.sigF(s, o);
  const sigT = d.sig(s, o);
  const fn = d.funNames(f);
  const m = d.dispatchText;
  if (!m.same(parts, on.text, sigT, fn.text, '', '')) m.keep(parts, on.text, sigT, fn.text, '', '');
  const text = d.memoLine(t, m);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = { obj: on.field, sig: sigF, state: fn.field };
  return d.done(id, 'record', t, text, fields, raw, { obj: on.field, sig: sigF });
};

/** QS_QEP_TRAN: a transition taken on an event. */
export const parseTran: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const f1 = r.ptr(c.funPtrSize);
  const f2 = r.ptr(c.funPtrSize);
  if (d.lineAgain(t, TRAN, o, f1, f2, s, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const text = d.partsLine(t, TRAN, d.obj(o), d.sig(s, o), d.fun(f1), d.fun(f2));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = { obj: objF, sig: sigF, source: d.funF(f1), target: d.funF(f2) };
  return d.done(id, 'record', t, text, fields, raw, { obj: objF, sig: sigF });
};

/** QS_QEP_UNHANDLED: an event a state did not handle (no timestamp). */
export const parseUnhandled: RecordParser = (d, r, c, id, raw) => {
  const s = r.u(c.sigSize);
  const o = r.ptr(c.objPtrSize);
  const f = r.ptr(c.funPtrSize);
  if (d.lineAgain(-1, UNHANDLED, o, f, 0, s, 0, 0)) return d.done(id, 'record', null, '', NO_FIELDS, raw);
  const objF = d.objF(o);
  const sigF = d.sigF(s, o);
  const text = d.plainLine(UNHANDLED, d.obj(o), d.sig(s, o), d.fun(f));
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  return d.done(id, 'record', null, text, { obj: objF, sig: sigF, state: d.funF(f) }, raw, { obj: objF, sig: sigF });
};

/** QS_QEP_STATE_ENTRY and _EXIT: a state entered or left (no timestamp). */
export const parseStateEntryExit: RecordParser = (d, r, c, id, raw) => {
  const o = r.ptr(c.objPtrSize);
  const f = r.ptr(c.funPtrSize);
  const parts = id === Id.QS_QEP_STATE_ENTRY ? ST_ENTRY : ST_EXIT;
  if (d.lineAgain(-1, parts, o, f, 0, 0, 0, 0)) return d.done(id, 'record', null, '', NO_FIELDS, raw);
  const text = d.plainLine(parts, d.obj(o), d.fun(f));
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  return d.done(id, 'record', null, text, { obj: d.objF(o), state: d.funF(f) }, raw, { obj: d.objF(o) });
};
