import type { DecodedRecord } from '@tracehub/contracts';
import { QsRecordId as Id } from './constants.js';
import type { QsKey } from './dictionaries.js';
import { dec, NumText } from './format.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, NO_TS, type RecordContext, type RecordParser } from './record-context.js';

/**
 * The time events' records (spec 5): ticks, arming, disarming and posting of time events.
 * Arms and disarms are among the most frequent records.
 */

const TE_ARM = new NumText(' TE', '-Arm  Obj=');
const TE_DISARM = new NumText(' TE', '-Dis  Obj=');
const TE_CTR = new NumText(' TE', '-Ctr  Obj=');
/** A time event's arm, disarm or counter line, its tag (` TE0-Arm  Obj=`) the first value. */
const TIME_EVT = new LineParts('', '', ',AO=');
const TE_DISARM_ATTEMPT = new LineParts(' TE', '-DisA Obj=', ',AO=');
const TE_POST = new LineParts(' TE', '-Post Obj=', ',Sig=', ',AO=');
const TE_AUTO_DISARM = new LineParts(`${NO_TS}TE`, '-ADis Obj=', ',AO=');
const TICK = new LineParts(`${NO_TS}Tick<`, '>  Ctr=');

/** QS_QF_TICK: a tick of a clock rate (no timestamp; the tick counter instead). */
export const parseTick: RecordParser = (d, r, c, id, raw) => {
  const ctr = r.u(c.teCtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  const text = d.plainLine(TICK, dec(rate), d.counterText.of(ctr));
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  return d.done(id, 'record', null, text, { rate, ctr }, raw);
};

/**
 * QS_QF_TIMEEVT_ARM, _DISARM and _REARM, and id 38 before QS 6.2 (QS_QF_TIMEEVT_CTR): one
 * layout. The line's tail of arms and disarms up to the counters is kept while its pieces
 * repeat (`timeEvtText`).
 */
export const parseTimeEvtArm: RecordParser = (d, r, c, id, raw) => {
  const rearm = id === Id.QS_QF_TIMEEVT_REARM;
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const tim = r.u(c.teCtrSize);
  const int = r.u(c.teCtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (rearm) return rearmed(d, id, raw, t, te, ao, tim, int, rate, c.version >= 800);
  if (d.lineAgain(t, TIME_EVT, te, ao, tim, id * 256 + rate, int, 0))
    return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const teN = d.objNames(te);
  const aoN = d.objNames(ao);
  const tag = (id === Id.QS_QF_TIMEEVT_ARM ? TE_ARM : id === Id.QS_QF_TIMEEVT_DISARM ? TE_DISARM : TE_CTR).of(rate);
  const m = d.timeEvtText;
  if (!m.same(TIME_EVT, tag, teN.text, aoN.text, '', '')) m.keep(TIME_EVT, tag, teN.text, aoN.text, '', '');
  const text = d.timeEvtLine(t, m, tim, int);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = { obj: teN.field, ao: aoN.field, tim, interval: int, rate };
  return d.done(id, 'record', t, text, fields, raw, { obj: teN.field });
};

/**
 * The rest of a QS_QF_TIMEEVT_REARM: whether the time event was armed. The target sends (rate,
 * wasArmed); QSPY 7.4 prints them the other way round (Q3), QSPY 8.x in their order.
 */
function rearmed(
  d: RecordContext,
  id: number,
  raw: Uint8Array,
  t: number,
  te: QsKey,
  ao: QsKey,
  tim: number,
  int: number,
  rate: number,
  inOrder: boolean,
): DecodedRecord {
  const wasArmed = d.r.u(1);
  const objF = d.objF(te);
  const [shownRate, shownWas] = inOrder ? [rate, wasArmed] : [wasArmed, rate];
  const counters = `Tim=${dec(tim)},Int=${dec(int)},Was=${dec(shownWas)}`;
  const text = d.tsLine(t, ` TE${dec(shownRate)}-Rarm Obj=${d.obj(te)},AO=${d.obj(ao)},${counters}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  const fields = { obj: objF, ao: d.objF(ao), tim, interval: int, rate, wasArmed: wasArmed !== 0 };
  return d.done(id, 'record', t, text, fields, raw, { obj: objF });
}

/** QS_QF_TIMEEVT_DISARM_ATTEMPT: a disarm of a time event that was not armed. */
export const parseTimeEvtDisarmAttempt: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(t, TE_DISARM_ATTEMPT, te, ao, 0, rate, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const text = d.partsLine(t, TE_DISARM_ATTEMPT, dec(rate), d.obj(te), d.obj(ao));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, ao: d.objF(ao), rate }, raw, { obj: objF });
};

/** QS_QF_TIMEEVT_POST: a time event's event posted to its active object. */
export const parseTimeEvtPost: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const s = r.u(c.sigSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(t, TE_POST, te, ao, 0, s, rate, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const sigF = d.sigF(s, ao);
  const text = d.partsLine(t, TE_POST, dec(rate), d.obj(te), d.sig(s, ao), d.obj(ao));
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { obj: objF, sig: sigF, ao: d.objF(ao), rate }, raw, { obj: objF, sig: sigF });
};

/** QS_QF_TIMEEVT_AUTO_DISARM: a one-shot time event disarmed as it fired (no timestamp). */
export const parseTimeEvtAutoDisarm: RecordParser = (d, r, c, id, raw) => {
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(-1, TE_AUTO_DISARM, te, ao, 0, rate, 0, 0)) return d.done(id, 'record', null, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const text = d.plainLine(TE_AUTO_DISARM, dec(rate), d.obj(te), d.obj(ao));
  if (!d.fieldsWanted) return d.done(id, 'record', null, text, NO_FIELDS, raw);
  return d.done(id, 'record', null, text, { obj: objF, ao: d.objF(ao), rate }, raw, { obj: objF });
};
