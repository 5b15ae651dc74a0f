/**
 * Numbers and names of the QS protocol (spec: qs-protocol.md, sections 2, 5 and 10).
 * Names are the ones QSPY prints in its error messages.
 */

/** Frame delimiter: ends every frame, never escaped. */
export const QS_FRAME = 0x7e;
/** Escape byte: the next byte is XOR-ed with 0x20. */
export const QS_ESC = 0x7d;
export const QS_ESC_XOR = 0x20;
/** Size of QSPY's record buffer: a longer frame is "too long" and discarded. */
export const QS_RECORD_SIZE_MAX = 512;

/**
 * Predefined record ids, QP/C 7.x numbering (spec 5), and the one 8.x added (spec 12).
 * User records are QS_USER and above.
 */
export const QsRecordId = {
  QS_EMPTY: 0,
  QS_QEP_STATE_ENTRY: 1,
  QS_QEP_STATE_EXIT: 2,
  QS_QEP_STATE_INIT: 3,
  QS_QEP_INIT_TRAN: 4,
  QS_QEP_INTERN_TRAN: 5,
  QS_QEP_TRAN: 6,
  QS_QEP_IGNORED: 7,
  QS_QEP_DISPATCH: 8,
  QS_QEP_UNHANDLED: 9,
  QS_QF_ACTIVE_DEFER: 10,
  QS_QF_ACTIVE_RECALL: 11,
  QS_QF_ACTIVE_SUBSCRIBE: 12,
  QS_QF_ACTIVE_UNSUBSCRIBE: 13,
  QS_QF_ACTIVE_POST: 14,
  QS_QF_ACTIVE_POST_LIFO: 15,
  QS_QF_ACTIVE_GET: 16,
  QS_QF_ACTIVE_GET_LAST: 17,
  QS_QF_ACTIVE_RECALL_ATTEMPT: 18,
  QS_QF_EQUEUE_POST: 19,
  QS_QF_EQUEUE_POST_LIFO: 20,
  QS_QF_EQUEUE_GET: 21,
  QS_QF_EQUEUE_GET_LAST: 22,
  QS_QF_NEW_ATTEMPT: 23,
  QS_QF_MPOOL_GET: 24,
  QS_QF_MPOOL_PUT: 25,
  QS_QF_PUBLISH: 26,
  QS_QF_NEW_REF: 27,
  QS_QF_NEW: 28,
  QS_QF_GC_ATTEMPT: 29,
  QS_QF_GC: 30,
  QS_QF_TICK: 31,
  QS_QF_TIMEEVT_ARM: 32,
  QS_QF_TIMEEVT_AUTO_DISARM: 33,
  QS_QF_TIMEEVT_DISARM_ATTEMPT: 34,
  QS_QF_TIMEEVT_DISARM: 35,
  QS_QF_TIMEEVT_REARM: 36,
  QS_QF_TIMEEVT_POST: 37,
  QS_QF_DELETE_REF: 38,
  QS_QF_CRIT_ENTRY: 39,
  QS_QF_CRIT_EXIT: 40,
  QS_QF_ISR_ENTRY: 41,
  QS_QF_ISR_EXIT: 42,
  QS_QF_INT_DISABLE: 43,
  QS_QF_INT_ENABLE: 44,
  QS_QF_ACTIVE_POST_ATTEMPT: 45,
  QS_QF_EQUEUE_POST_ATTEMPT: 46,
  QS_QF_MPOOL_GET_ATTEMPT: 47,
  QS_SCHED_PREEMPT: 48,
  QS_SCHED_RESTORE: 49,
  QS_SCHED_LOCK: 50,
  QS_SCHED_UNLOCK: 51,
  QS_SCHED_NEXT: 52,
  QS_SCHED_IDLE: 53,
  QS_ENUM_DICT: 54,
  QS_QEP_TRAN_HIST: 55,
  QS_QEP_TRAN_EP: 56,
  QS_QEP_TRAN_XP: 57,
  QS_TEST_PAUSED: 58,
  QS_TEST_PROBE_GET: 59,
  QS_SIG_DICT: 60,
  QS_OBJ_DICT: 61,
  QS_FUN_DICT: 62,
  QS_USR_DICT: 63,
  QS_TARGET_INFO: 64,
  QS_TARGET_DONE: 65,
  QS_RX_STATUS: 66,
  QS_QUERY_DATA: 67,
  QS_PEEK_DATA: 68,
  QS_ASSERT_FAIL: 69,
  QS_QF_RUN: 70,
  QS_SEM_TAKE: 71,
  QS_SEM_BLOCK: 72,
  QS_SEM_SIGNAL: 73,
  QS_SEM_BLOCK_ATTEMPT: 74,
  QS_MTX_LOCK: 75,
  QS_MTX_BLOCK: 76,
  QS_MTX_UNLOCK: 77,
  QS_MTX_LOCK_ATTEMPT: 78,
  QS_MTX_BLOCK_ATTEMPT: 79,
  QS_MTX_UNLOCK_ATTEMPT: 80,
  /** QS 8.x only (a reserved id before). */
  QS_QF_ACTIVE_DEFER_ATTEMPT: 81,
  QS_USER: 100,
} as const;
export type QsRecordId = (typeof QsRecordId)[keyof typeof QsRecordId];

/**
 * The records that set up how the ones after them decode: QS_EMPTY (a target reset before
 * QS 5.5), the dictionaries and the target info. Every other record only reads that state.
 * qspy sends none of them on its text channel.
 */
export const QS_STATE_RECORD_IDS: readonly QsRecordId[] = Object.freeze([
  QsRecordId.QS_EMPTY,
  QsRecordId.QS_ENUM_DICT,
  QsRecordId.QS_SIG_DICT,
  QsRecordId.QS_OBJ_DICT,
  QsRecordId.QS_FUN_DICT,
  QsRecordId.QS_USR_DICT,
  QsRecordId.QS_TARGET_INFO,
]);

/** Names of the predefined records 0..99 with a QS 8.x target: QsRecordId's, 82..99 QS_RESERVED (spec 12). */
export const QS_8X_RECORD_NAMES: readonly string[] = Object.freeze(
  (() => {
    const names = new Array<string>(QsRecordId.QS_USER).fill('QS_RESERVED');
    for (const [name, id] of Object.entries(QsRecordId)) if (id < QsRecordId.QS_USER) names[id] = name;
    return names;
  })(),
);

/** Names of the predefined records 0..99 as QSPY 7.4 names them: id 81 is reserved before QS 8. */
export const QS_RECORD_NAMES: readonly string[] = Object.freeze(
  QS_8X_RECORD_NAMES.map((name, id) => (id === QsRecordId.QS_QF_ACTIVE_DEFER_ATTEMPT ? 'QS_RESERVED' : name)),
);

/** Host -> target (QS-RX) record ids, spec section 10.2. */
export const QsRxId = {
  QS_RX_INFO: 0,
  QS_RX_COMMAND: 1,
  QS_RX_RESET: 2,
  QS_RX_TICK: 3,
  QS_RX_PEEK: 4,
  QS_RX_POKE: 5,
  QS_RX_FILL: 6,
  QS_RX_TEST_SETUP: 7,
  QS_RX_TEST_TEARDOWN: 8,
  QS_RX_TEST_PROBE: 9,
  QS_RX_GLB_FILTER: 10,
  QS_RX_LOC_FILTER: 11,
  QS_RX_AO_FILTER: 12,
  QS_RX_CURR_OBJ: 13,
  QS_RX_TEST_CONTINUE: 14,
  QS_RX_QUERY_CURR: 15,
  QS_RX_EVENT: 16,
} as const;

/** QS-RX names in id order, as QSPY prints them in Trg-Ack / Trg-ERR / Trg-Done lines. */
export const QS_RX_NAMES: readonly string[] = Object.freeze(Object.keys(QsRxId));

/** Object kinds of QS_RX_CURR_OBJ / QS_RX_QUERY_CURR and QS_QUERY_DATA (spec 10.2). */
export const QsObjKind = { SM: 0, AO: 1, MP: 2, EQ: 3, TE: 4, AP: 5, SM_AO: 6, EP: 7 } as const;

/** Names of the object kinds, by QsObjKind, as QSPY 7.4 prints them (kind 7 came with QP 8). */
export const QS_OBJ_KIND_NAMES: readonly string[] = Object.freeze(['SM', 'AO', 'MP', 'EQ', 'TE', 'AP', 'SM_AO']);

/** Names of the object kinds as QSPY 8.1 prints them: kind 7 is an event pool by its number. */
export const QS_8X_OBJ_KIND_NAMES: readonly string[] = Object.freeze([...QS_OBJ_KIND_NAMES, 'EP']);

/**
 * Ids of the records the decoder itself produces (kind `error` or `info`): negative, so that
 * they never collide with a record id from the wire.
 */
export const QsDecoderRecordId = {
  /** A frame whose checksum is wrong (or garbage before the first good frame). */
  QS_BAD_CHECKSUM: -1,
  /** Sequence discontinuity: `fields.lost` frames are missing. */
  SEQ_GAP: -2,
  /** A frame with a good checksum but fewer than 3 bytes. */
  QS_RECORD_TOO_SHORT: -3,
  /** A frame longer than 512 un-escaped bytes: discarded. */
  QS_RECORD_TOO_LONG: -4,
  /** A record whose payload does not match its layout (bytes unused / needed). */
  QS_RECORD_LENGTH: -5,
  /** Bytes the link lost before a chunk (the gateway's `th-lost`). */
  LINK_LOST: -6,
  /** Bytes of an unfinished frame when the stream ended. */
  QS_PARTIAL_FRAME: -7,
  /** Configuration assumed before any target info (info record). */
  QS_DEFAULT_CONFIG: -8,
  /** Bytes before the first good frame that do not form one (QSPY drops them silently). */
  QS_LEADING_GARBAGE: -9,
  /** A note set on the live link (a user marker, `th-marker`): kind `marker`, text = its comment. */
  TRACEHUB_NOTE: -10,
} as const;

type QsWellKnownName = Exclude<keyof typeof QsRecordId, 'QS_USER'> | keyof typeof QsDecoderRecordId;

/**
 * The `name` of every predefined record and of every record the decoder makes, as constants:
 * what other packages match on (`QsRecordName.SEQ_GAP`, `QsRecordName.QS_TARGET_INFO`) instead
 * of spelling the string again. User records are named by their dictionary entry or `USER+nnn`.
 */
export const QsRecordName: { readonly [K in QsWellKnownName]: K } = Object.freeze(
  Object.fromEntries(
    [...Object.keys(QsRecordId), ...Object.keys(QsDecoderRecordId)].filter((k) => k !== 'QS_USER').map((k) => [k, k]),
  ),
) as { readonly [K in QsWellKnownName]: K };
