import type { DecodedRecord } from '@tracehub/contracts';
import { QsRecordId as Id } from './constants.js';
import { dec, NumText } from './format.js';
import { LineParts } from './line-parts.js';
import { NO_FIELDS, NO_TS, type RecordContext } from './record-context.js';

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
export function parseTick(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const ctr = r.u(c.teCtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  const text = d.plainLine(TICK, dec(rate), d.counterText.of(ctr));
  return d.done(id, 'record', null, text, d.fieldsWanted ? { rate, ctr } : NO_FIELDS, raw);
}

/**
 * QS_QF_TIMEEVT_ARM and _DISARM, and id 38 before QS 6.2 (QS_QF_TIMEEVT_CTR). Their line's
 * tail up to the counters is kept while its pieces repeat (`timeEvtText`).
 */
export function parseTimeEvtArmDisarm(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const tim = r.u(c.teCtrSize);
  const int = r.u(c.teCtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(t, TIME_EVT, te, ao, tim, id * 256 + rate, int, 0))
    return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const teN = d.objNames(te);
  const aoN = d.objNames(ao);
  const tag = (id === Id.QS_QF_TIMEEVT_ARM ? TE_ARM : id === Id.QS_QF_TIMEEVT_DISARM ? TE_DISARM : TE_CTR).of(rate);
  const m = d.timeEvtText;
  if (!m.same(TIME_EVT, tag, teN.text, aoN.text, '', '')) m.keep(TIME_EVT, tag, teN.text, aoN.text, '', '');
  const text = d.timeEvtLine(t, m, tim, int);
  const w = d.fieldsWanted;
  const fields = w ? { obj: teN.field, ao: aoN.field, tim, interval: int, rate } : NO_FIELDS;
  return d.done(id, 'record', t, text, fields, raw, w ? { obj: teN.field } : undefined);
}

/** QS_QF_TIMEEVT_AUTO_DISARM: a one-shot time event disarmed as it fired (no timestamp). */
export function parseTimeEvtAutoDisarm(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(-1, TE_AUTO_DISARM, te, ao, 0, rate, 0, 0)) return d.done(id, 'record', null, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const text = d.plainLine(TE_AUTO_DISARM, dec(rate), d.obj(te), d.obj(ao));
  const w = d.fieldsWanted;
  const fields = w ? { obj: objF, ao: d.objF(ao), rate } : NO_FIELDS;
  return d.done(id, 'record', null, text, fields, raw, w ? { obj: objF } : undefined);
}

/** QS_QF_TIMEEVT_DISARM_ATTEMPT: a disarm of a time event that was not armed. */
export function parseTimeEvtDisarmAttempt(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(t, TE_DISARM_ATTEMPT, te, ao, 0, rate, 0, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const text = d.partsLine(t, TE_DISARM_ATTEMPT, dec(rate), d.obj(te), d.obj(ao));
  const w = d.fieldsWanted;
  const fields = w ? { obj: objF, ao: d.objF(ao), rate } : NO_FIELDS;
  return d.done(id, 'record', t, text, fields, raw, w ? { obj: objF } : undefined);
}

/** QS_QF_TIMEEVT_REARM: a time event armed again, and whether it was armed. */
export function parseTimeEvtRearm(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const ao = r.ptr(c.objPtrSize);
  const tim = r.u(c.teCtrSize);
  const int = r.u(c.teCtrSize);
  // The target sends (rate, wasArmed); QSPY prints them the other way round (Q3).
  const rate = c.version < 500 ? 0 : r.u(1);
  const wasArmed = r.u(1);
  const objF = d.objF(te);
  const counters = `Tim=${dec(tim)},Int=${dec(int)},Was=${dec(rate)}`;
  const text = d.tsLine(t, ` TE${dec(wasArmed)}-Rarm Obj=${d.obj(te)},AO=${d.obj(ao)},${counters}`);
  const w = d.fieldsWanted;
  const fields = w ? { obj: objF, ao: d.objF(ao), tim, interval: int, rate, wasArmed: wasArmed !== 0 } : NO_FIELDS;
  return d.done(id, 'record', t, text, fields, raw, w ? { obj: objF } : undefined);
}

/** QS_QF_TIMEEVT_POST: a time event's event posted to its active object. */
export function parseTimeEvtPost(d: RecordContext, id: number, raw: Uint8Array): DecodedRecord {
  const { r, config: c } = d;
  const t = r.u(c.timeSize);
  const te = r.ptr(c.objPtrSize);
  const s = r.u(c.sigSize);
  const ao = r.ptr(c.objPtrSize);
  const rate = c.version < 500 ? 0 : r.u(1);
  if (d.lineAgain(t, TE_POST, te, ao, 0, s, rate, 0)) return d.done(id, 'record', t, '', NO_FIELDS, raw);
  const objF = d.objF(te);
  const sigF = d.sigF(s, ao);
  const text = d.partsLine(t, TE_POST, dec(rate), d.obj(te), d.sig(s, ao), d.obj(ao));
  const w = d.fieldsWanted;
  const fields = w ? { obj: objF, sig: sigF, ao: d.objF(ao), rate } : NO_FIELDS;
  return d.done(id, 'record', t, text, fields, raw, w ? { obj: objF, sig: sigF } : undefined);
}
