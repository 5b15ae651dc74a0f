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
  parseTimeEvtArm,
  parseTimeEvtAutoDisarm,
  parseTimeEvtDisarmAttempt,
  parseTimeEvtPost,
} from './time-event-records.js';
import { parseUnknown } from './unknown-record.js';

/**
 * The parser of each predefined record id, by family (one module each). A parser that serves
 * ids whose layout changed with the QS version reads `config.version` itself. Ids not listed
 * (43, 44, 82..99) are `parseUnknown`'s, and so is 81 before QS 8.0 (`parseDeferAttempt`).
 */
const PARSER_OF_ID: readonly (readonly [number, RecordParser])[] = [
  [Id.QS_EMPTY, parseEmpty],

  // State machines (qep-records.ts)
  [Id.QS_QEP_STATE_ENTRY, parseStateEntryExit],
  [Id.QS_QEP_STATE_EXIT, parseStateEntryExit],
  [Id.QS_QEP_STATE_INIT, parseStateTransition],
  [Id.QS_QEP_TRAN_HIST, parseStateTransition],
  [Id.QS_QEP_TRAN_EP, parseStateTransition],
  [Id.QS_QEP_TRAN_XP, parseStateTransition],
  [Id.QS_QEP_INIT_TRAN, parseInitTran],
  [Id.QS_QEP_INTERN_TRAN, parseDispatchLike],
  [Id.QS_QEP_IGNORED, parseDispatchLike],
  [Id.QS_QEP_DISPATCH, parseDispatchLike],
  [Id.QS_QEP_TRAN, parseTran],
  [Id.QS_QEP_UNHANDLED, parseUnhandled],

  // Active objects and event queues (queue-records.ts)
  [Id.QS_QF_ACTIVE_DEFER, parseDeferRecall],
  [Id.QS_QF_ACTIVE_RECALL, parseDeferRecall],
  [Id.QS_QF_ACTIVE_DEFER_ATTEMPT, parseDeferAttempt],
  [Id.QS_QF_ACTIVE_SUBSCRIBE, parseSubscribe],
  [Id.QS_QF_ACTIVE_UNSUBSCRIBE, parseSubscribe],
  [Id.QS_QF_ACTIVE_POST, parseActivePost],
  [Id.QS_QF_ACTIVE_POST_ATTEMPT, parseActivePost],
  [Id.QS_QF_ACTIVE_POST_LIFO, parseQueuePost],
  [Id.QS_QF_EQUEUE_POST, parseQueuePost],
  [Id.QS_QF_EQUEUE_POST_LIFO, parseQueuePost],
  [Id.QS_QF_EQUEUE_POST_ATTEMPT, parseQueuePost],
  [Id.QS_QF_ACTIVE_GET, parseQueueGet],
  [Id.QS_QF_EQUEUE_GET, parseQueueGet],
  [Id.QS_QF_ACTIVE_GET_LAST, parseQueueGetLast],
  [Id.QS_QF_EQUEUE_GET_LAST, parseQueueGetLast],
  [Id.QS_QF_ACTIVE_RECALL_ATTEMPT, parseRecallAttempt],

  // Memory pools and events (pool-event-records.ts)
  [Id.QS_QF_NEW_ATTEMPT, parseNew],
  [Id.QS_QF_NEW, parseNew],
  [Id.QS_QF_MPOOL_GET, parsePoolGet],
  [Id.QS_QF_MPOOL_GET_ATTEMPT, parsePoolGet],
  [Id.QS_QF_MPOOL_PUT, parsePoolPut],
  [Id.QS_QF_PUBLISH, parsePublish],
  [Id.QS_QF_NEW_REF, parseEventRef],
  [Id.QS_QF_GC_ATTEMPT, parseEventRef],
  [Id.QS_QF_GC, parseEventRef],
  [Id.QS_QF_DELETE_REF, parseEventRef],

  // Time events (time-event-records.ts)
  [Id.QS_QF_TICK, parseTick],
  [Id.QS_QF_TIMEEVT_ARM, parseTimeEvtArm],
  [Id.QS_QF_TIMEEVT_DISARM, parseTimeEvtArm],
  [Id.QS_QF_TIMEEVT_AUTO_DISARM, parseTimeEvtAutoDisarm],
  [Id.QS_QF_TIMEEVT_DISARM_ATTEMPT, parseTimeEvtDisarmAttempt],
  [Id.QS_QF_TIMEEVT_REARM, parseTimeEvtArm],
  [Id.QS_QF_TIMEEVT_POST, parseTimeEvtPost],

  // Critical sections, interrupts, the scheduler, semaphores and mutexes (scheduler-records.ts)
  [Id.QS_QF_CRIT_ENTRY, parseCrit],
  [Id.QS_QF_CRIT_EXIT, parseCrit],
  [Id.QS_QF_ISR_ENTRY, parseIsr],
  [Id.QS_QF_ISR_EXIT, parseIsr],
  [Id.QS_SCHED_PREEMPT, parseSchedPrio],
  [Id.QS_SCHED_RESTORE, parseSchedPrio],
  [Id.QS_SCHED_NEXT, parseSchedPrio],
  [Id.QS_SCHED_LOCK, parseSchedLock],
  [Id.QS_SCHED_UNLOCK, parseSchedLock],
  [Id.QS_SCHED_IDLE, parseSchedIdle],
  [Id.QS_SEM_TAKE, parseSemMtx],
  [Id.QS_SEM_BLOCK, parseSemMtx],
  [Id.QS_SEM_SIGNAL, parseSemMtx],
  [Id.QS_SEM_BLOCK_ATTEMPT, parseSemMtx],
  [Id.QS_MTX_LOCK, parseSemMtx],
  [Id.QS_MTX_BLOCK, parseSemMtx],
  [Id.QS_MTX_UNLOCK, parseSemMtx],
  [Id.QS_MTX_LOCK_ATTEMPT, parseSemMtx],
  [Id.QS_MTX_BLOCK_ATTEMPT, parseSemMtx],
  [Id.QS_MTX_UNLOCK_ATTEMPT, parseSemMtx],

  // Dictionaries (dictionary-records.ts)
  [Id.QS_ENUM_DICT, parseEnumDict],
  [Id.QS_SIG_DICT, parseSigDict],
  [Id.QS_OBJ_DICT, parseObjFunDict],
  [Id.QS_FUN_DICT, parseObjFunDict],
  [Id.QS_USR_DICT, parseUsrDict],

  // The target (target-records.ts)
  [Id.QS_TARGET_INFO, parseTargetInfo],
  [Id.QS_ASSERT_FAIL, parseAssertFail],
  [Id.QS_QF_RUN, parseQfRun],

  // Tests and control (test-records.ts)
  [Id.QS_TEST_PAUSED, parseTestPaused],
  [Id.QS_TEST_PROBE_GET, parseTestProbe],
  [Id.QS_TARGET_DONE, parseTargetDone],
  [Id.QS_RX_STATUS, parseRxStatus],
  [Id.QS_QUERY_DATA, parseQueryData],
  [Id.QS_PEEK_DATA, parsePeekData],
];

/**
 * The parser of every id 0..255 (user ids never reach it), in a table rather than a switch:
 * through a switch V8 inlined the parsers it had seen into the switch's function and compiled
 * it again as new kinds of records came (PERFORMANCE.md, "Warm-up"). Not frozen, and made
 * whole (no holes), so that its elements load inline.
 */
export const RECORD_PARSERS: readonly RecordParser[] = (() => {
  const byId = new Map<number, RecordParser>(PARSER_OF_ID);
  return Array.from({ length: 256 }, (_, id) => byId.get(id) ?? parseUnknown);
})();
