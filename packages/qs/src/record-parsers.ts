import { QsRecordId as Id } from './constants.js';
import { parseEnumDict, parseObjFunDict, parseSigDict, parseUsrDict } from './dictionary-records.js';
import { parseEventRef, parseNew, parsePoolGet, parsePoolPut, parsePublish } from './pool-event-records.js';
import {
  parseDispatchLike,
  parseInitTran,
  parseStateEntryExit,
  parseStateTransition,
  parseTran,
  parseUnhandled,
} from './qep-records.js';
import {
  parseActivePost,
  parseDeferAttempt,
  parseDeferRecall,
  parseQueueGet,
  parseQueueGetLast,
  parseQueuePost,
  parseRecallAttempt,
  parseSubscribe,
} from './queue-records.js';
import type { RecordParser } from './record-context.js';
import {
  parseCrit,
  parseIsr,
  parseSchedIdle,
  parseSchedLock,
  parseSchedPrio,
  parseSemMtx,
} from './scheduler-records.js';
import { parseAssertFail, parseEmpty, parseQfRun, parseTargetInfo } from './target-records.js';
import {
  parsePeekData,
  parseQueryData,
  parseRxStatus,
  parseTargetDone,
  parseTestPaused,
  parseTestProbe,
} from './test-records.js';
import {
  parseTick,
  parseTimeEvtArmDisarm,
  parseTimeEvtAutoDisarm,
  parseTimeEvtDisarmAttempt,
  parseTimeEvtPost,
  parseTimeEvtRearm,
} from './time-event-records.js';
import { parseUnknown } from './unknown-record.js';

/**
 * The parser of each predefined record id, by family (one module each). A parser that serves
 * ids whose layout changed with the QS version reads `config.version` itself. Ids not listed
 * (43, 44, 81..99 in QS 7.x) are `parseUnknown`'s.
 */
const PARSERS_OF_IDS: readonly (readonly [RecordParser, ...number[]])[] = [
  [parseEmpty, Id.QS_EMPTY],

  // State machines (qep-records.ts)
  [parseStateEntryExit, Id.QS_QEP_STATE_ENTRY, Id.QS_QEP_STATE_EXIT],
  [parseStateTransition, Id.QS_QEP_STATE_INIT, Id.QS_QEP_TRAN_HIST, Id.QS_QEP_TRAN_EP, Id.QS_QEP_TRAN_XP],
  [parseInitTran, Id.QS_QEP_INIT_TRAN],
  [parseDispatchLike, Id.QS_QEP_INTERN_TRAN, Id.QS_QEP_IGNORED, Id.QS_QEP_DISPATCH],
  [parseTran, Id.QS_QEP_TRAN],
  [parseUnhandled, Id.QS_QEP_UNHANDLED],

  // Active objects and event queues (queue-records.ts)
  [parseDeferRecall, Id.QS_QF_ACTIVE_DEFER, Id.QS_QF_ACTIVE_RECALL],
  [parseDeferAttempt, Id.QS_QF_ACTIVE_DEFER_ATTEMPT],
  [parseSubscribe, Id.QS_QF_ACTIVE_SUBSCRIBE, Id.QS_QF_ACTIVE_UNSUBSCRIBE],
  [parseActivePost, Id.QS_QF_ACTIVE_POST, Id.QS_QF_ACTIVE_POST_ATTEMPT],
  [
    parseQueuePost,
    Id.QS_QF_ACTIVE_POST_LIFO,
    Id.QS_QF_EQUEUE_POST,
    Id.QS_QF_EQUEUE_POST_LIFO,
    Id.QS_QF_EQUEUE_POST_ATTEMPT,
  ],
  [parseQueueGet, Id.QS_QF_ACTIVE_GET, Id.QS_QF_EQUEUE_GET],
  [parseQueueGetLast, Id.QS_QF_ACTIVE_GET_LAST, Id.QS_QF_EQUEUE_GET_LAST],
  [parseRecallAttempt, Id.QS_QF_ACTIVE_RECALL_ATTEMPT],

  // Memory pools and events (pool-event-records.ts)
  [parseNew, Id.QS_QF_NEW_ATTEMPT, Id.QS_QF_NEW],
  [parsePoolGet, Id.QS_QF_MPOOL_GET, Id.QS_QF_MPOOL_GET_ATTEMPT],
  [parsePoolPut, Id.QS_QF_MPOOL_PUT],
  [parsePublish, Id.QS_QF_PUBLISH],
  [parseEventRef, Id.QS_QF_NEW_REF, Id.QS_QF_GC_ATTEMPT, Id.QS_QF_GC, Id.QS_QF_DELETE_REF],

  // Time events (time-event-records.ts)
  [parseTick, Id.QS_QF_TICK],
  [parseTimeEvtArmDisarm, Id.QS_QF_TIMEEVT_ARM, Id.QS_QF_TIMEEVT_DISARM],
  [parseTimeEvtAutoDisarm, Id.QS_QF_TIMEEVT_AUTO_DISARM],
  [parseTimeEvtDisarmAttempt, Id.QS_QF_TIMEEVT_DISARM_ATTEMPT],
  [parseTimeEvtRearm, Id.QS_QF_TIMEEVT_REARM],
  [parseTimeEvtPost, Id.QS_QF_TIMEEVT_POST],

  // Critical sections, interrupts, the scheduler, semaphores and mutexes (scheduler-records.ts)
  [parseCrit, Id.QS_QF_CRIT_ENTRY, Id.QS_QF_CRIT_EXIT],
  [parseIsr, Id.QS_QF_ISR_ENTRY, Id.QS_QF_ISR_EXIT],
  [parseSchedPrio, Id.QS_SCHED_PREEMPT, Id.QS_SCHED_RESTORE, Id.QS_SCHED_NEXT],
  [parseSchedLock, Id.QS_SCHED_LOCK, Id.QS_SCHED_UNLOCK],
  [parseSchedIdle, Id.QS_SCHED_IDLE],
  [
    parseSemMtx,
    Id.QS_SEM_TAKE,
    Id.QS_SEM_BLOCK,
    Id.QS_SEM_SIGNAL,
    Id.QS_SEM_BLOCK_ATTEMPT,
    Id.QS_MTX_LOCK,
    Id.QS_MTX_BLOCK,
    Id.QS_MTX_UNLOCK,
    Id.QS_MTX_LOCK_ATTEMPT,
    Id.QS_MTX_BLOCK_ATTEMPT,
    Id.QS_MTX_UNLOCK_ATTEMPT,
  ],

  // Dictionaries (dictionary-records.ts)
  [parseEnumDict, Id.QS_ENUM_DICT],
  [parseSigDict, Id.QS_SIG_DICT],
  [parseObjFunDict, Id.QS_OBJ_DICT, Id.QS_FUN_DICT],
  [parseUsrDict, Id.QS_USR_DICT],

  // The target (target-records.ts)
  [parseTargetInfo, Id.QS_TARGET_INFO],
  [parseAssertFail, Id.QS_ASSERT_FAIL],
  [parseQfRun, Id.QS_QF_RUN],

  // Tests and control (test-records.ts)
  [parseTestPaused, Id.QS_TEST_PAUSED],
  [parseTestProbe, Id.QS_TEST_PROBE_GET],
  [parseTargetDone, Id.QS_TARGET_DONE],
  [parseRxStatus, Id.QS_RX_STATUS],
  [parseQueryData, Id.QS_QUERY_DATA],
  [parsePeekData, Id.QS_PEEK_DATA],
];

/**
 * The parser of every id 0..255 (user ids never reach it), in a table rather than a switch:
 * through a switch V8 inlined the parsers it had seen into the switch's function and compiled
 * it again as new kinds of records came (PERFORMANCE.md, "Warm-up"). Not frozen, and made
 * whole (no holes), so that its elements load inline.
 */
export const RECORD_PARSERS: readonly RecordParser[] = (() => {
  const byId = new Map<number, RecordParser>();
  for (const [parser, ...ids] of PARSERS_OF_IDS) for (const id of ids) byId.set(id, parser);
  return Array.from({ length: 256 }, (_, id) => byId.get(id) ?? parseUnknown);
})();
