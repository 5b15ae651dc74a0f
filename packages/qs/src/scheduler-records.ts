import { QsRecordId as Id } from './constants.js';
import { dec } from './format.js';
import { type Fields, NO_FIELDS, type RecordParser } from './record-context.js';

/**
 * The scheduler's records and those of what it runs under (spec 5): critical sections,
 * interrupts, preemption and scheduler locks, semaphores and mutexes.
 */

const SEM_MTX_TAGS = [
  'Sem-Take',
  'Sem-Blk ',
  'Sem-Sgnl',
  'Sem-BlkA',
  'Mtx-Lock',
  'Mtx-Blk ',
  'Mtx-Unlk',
  'Mtx-LckA',
  'Mtx-BlkA',
  'Mtx-UlkA',
];

/** QS_QF_CRIT_ENTRY and _EXIT: a critical section entered or left, and its nesting. */
export const parseCrit: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const nest = r.u(1);
  const text = d.tsLine(t, ` ${id === Id.QS_QF_CRIT_ENTRY ? 'QF-CritE' : 'QF-CritX'} Nest=${dec(nest)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { nest }, raw);
};

/** QS_QF_ISR_ENTRY and _EXIT: an interrupt entered or left, its nesting and priority. */
export const parseIsr: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const nest = r.u(1);
  const prio = r.u(1);
  const tag = id === Id.QS_QF_ISR_ENTRY ? 'QF-IsrE ' : 'QF-IsrX ';
  const text = d.tsLine(t, ` ${tag} Nest=${dec(nest)},Pri=${dec(prio)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { nest, prio }, raw, { prio });
};

/**
 * QS_SCHED_PREEMPT, _RESTORE and _NEXT: the priority run next and the one before. Before QS 7.1
 * ids 48 and 49 were the mutex lock and unlock.
 */
export const parseSchedPrio: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const a = r.u(1);
  const b = r.u(1);
  if (c.version < 710 && id !== Id.QS_SCHED_NEXT) {
    const lock = id === Id.QS_SCHED_PREEMPT ? 'Mtx-Lock' : 'Mtx-Unlk';
    const text = d.tsLine(t, ` ${lock} Pro=${dec(a)},Ceil=${dec(b)}`);
    if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
    return d.done(id, 'record', t, text, { prio: a, ceiling: b }, raw, { prio: a });
  }
  const tag = id === Id.QS_SCHED_PREEMPT ? 'Sch-Pre ' : id === Id.QS_SCHED_RESTORE ? 'Sch-Rest' : 'Sch-Next';
  // QSPY prints the second byte first (Q11); the fields keep the wire order.
  const text = d.tsLine(t, ` ${tag} Pri=${dec(b)}->${dec(a)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { prio: a, prevPrio: b }, raw, { prio: a });
};

/** QS_SCHED_LOCK and _UNLOCK: the scheduler's ceiling before and after. */
export const parseSchedLock: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const a = r.u(1);
  const b = r.u(1);
  const text = d.tsLine(t, ` ${id === Id.QS_SCHED_LOCK ? 'Sch-Lock' : 'Sch-Unlk'} Ceil=${dec(a)}->${dec(b)}`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { prevCeiling: a, ceiling: b }, raw);
};

/** QS_SCHED_IDLE: nothing left to run. */
export const parseSchedIdle: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const a = r.u(1);
  const text = d.tsLine(t, ` Sch-Idle Pri=${dec(a)}->0`);
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, { prevPrio: a }, raw);
};

/** QS_SEM_* and QS_MTX_*: a semaphore or mutex taken, blocked on, signalled or given back. */
export const parseSemMtx: RecordParser = (d, r, c, id, raw) => {
  const t = r.u(c.timeSize);
  const o = r.ptr(c.objPtrSize);
  const a = r.u(1);
  const b = r.u(1);
  const tag = SEM_MTX_TAGS[id - Id.QS_SEM_TAKE];
  const objF = d.objF(o);
  let text: string;
  let fields: Fields;
  if (id <= Id.QS_SEM_BLOCK_ATTEMPT) {
    text = d.tsLine(t, ` ${tag} ${d.obj(o)},Thr=${dec(a)},Cnt=${dec(b)}`);
    fields = { obj: objF, thread: a, count: b };
  } else if (id === Id.QS_MTX_BLOCK || id === Id.QS_MTX_BLOCK_ATTEMPT) {
    text = d.tsLine(t, ` ${tag} ${d.obj(o)},Hldr=${dec(a)},Thr=${dec(b)}`);
    fields = { obj: objF, holder: a, thread: b };
  } else {
    text = d.tsLine(t, ` ${tag} ${d.obj(o)},Hldr=${dec(a)},Nest=${dec(b)}`);
    fields = { obj: objF, holder: a, nest: b };
  }
  if (!d.fieldsWanted) return d.done(id, 'record', t, text, NO_FIELDS, raw);
  return d.done(id, 'record', t, text, fields, raw, { obj: objF });
};
