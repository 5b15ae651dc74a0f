import type { DecodedRecord } from '@tracehub/contracts/decoded-record';
import { QsRecordId as Id } from './constants.js';

/**
 * The groups QS records fall into (spec 5, "group" column): state machines, active objects,
 * raw event queues, memory pools, time events, the framework, the scheduler, semaphores,
 * mutexes, QUTest records and user records; then the decoder's own kinds.
 */
export const QS_RECORD_GROUPS = [
  'SM',
  'AO',
  'EQ',
  'MP',
  'TE',
  'QF',
  'SC',
  'SEM',
  'MTX',
  'TEST',
  'USER',
  'DICT',
  'INFO',
  'ERROR',
] as const;
export type QsRecordGroup = (typeof QS_RECORD_GROUPS)[number];

/** Group of each predefined id 0..99; ids not listed (reserved ones, QS_EMPTY, QF_RUN) are INFO. */
const GROUP_OF_ID: readonly QsRecordGroup[] = (() => {
  const table = new Array<QsRecordGroup>(Id.QS_USER).fill('INFO');
  const put = (group: QsRecordGroup, ...ids: number[]) => {
    for (const id of ids) table[id] = group;
  };
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  put('SM', ...range(Id.QS_QEP_STATE_ENTRY, Id.QS_QEP_UNHANDLED), Id.QS_QEP_TRAN_HIST, Id.QS_QEP_TRAN_EP);
  put('SM', Id.QS_QEP_TRAN_XP);
  put('AO', ...range(Id.QS_QF_ACTIVE_DEFER, Id.QS_QF_ACTIVE_RECALL_ATTEMPT), Id.QS_QF_ACTIVE_POST_ATTEMPT);
  put('AO', Id.QS_QF_ACTIVE_DEFER_ATTEMPT);
  put('EQ', ...range(Id.QS_QF_EQUEUE_POST, Id.QS_QF_EQUEUE_GET_LAST), Id.QS_QF_EQUEUE_POST_ATTEMPT);
  put('MP', Id.QS_QF_MPOOL_GET, Id.QS_QF_MPOOL_PUT, Id.QS_QF_MPOOL_GET_ATTEMPT);
  put('TE', ...range(Id.QS_QF_TIMEEVT_ARM, Id.QS_QF_TIMEEVT_POST));
  put('QF', Id.QS_QF_NEW_ATTEMPT, ...range(Id.QS_QF_PUBLISH, Id.QS_QF_TICK));
  put('QF', ...range(Id.QS_QF_DELETE_REF, Id.QS_QF_INT_ENABLE));
  put('SC', ...range(Id.QS_SCHED_PREEMPT, Id.QS_SCHED_IDLE));
  put('TEST', Id.QS_TEST_PAUSED, Id.QS_TEST_PROBE_GET, ...range(Id.QS_TARGET_DONE, Id.QS_PEEK_DATA));
  put('ERROR', Id.QS_ASSERT_FAIL);
  put('SEM', ...range(Id.QS_SEM_TAKE, Id.QS_SEM_BLOCK_ATTEMPT));
  put('MTX', ...range(Id.QS_MTX_LOCK, Id.QS_MTX_UNLOCK_ATTEMPT));
  return Object.freeze(table);
})();

/**
 * The group of a decoded QS record: errors, dictionary and info records by their kind, the
 * others by their id (user records, ids 100..124, are USER).
 */
export function qsRecordGroup(record: Pick<DecodedRecord, 'kind' | 'type'>): QsRecordGroup {
  if (record.kind === 'error') return 'ERROR';
  if (record.kind === 'dict') return 'DICT';
  if (record.kind === 'info') return 'INFO';
  const id = record.type;
  if (id >= Id.QS_USER && id <= 124) return 'USER';
  return GROUP_OF_ID[id] ?? 'INFO';
}
