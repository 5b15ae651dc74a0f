/**
 * Record names that more than one service matches on, spelled once. The codecs make these
 * records; the decoder service counts gaps, storage keeps each session's target info and
 * counts its gaps, the qspy front end leaves link losses out of its text.
 */
export const RecordName = {
  /** A sequence discontinuity: frames the target sent were not received. */
  SEQ_GAP: 'SEQ_GAP',
  /** Bytes the gateway dropped before a chunk (its `th-lost`). */
  LINK_LOST: 'LINK_LOST',
  /** A QS target's description of itself (sizes, build time). */
  QS_TARGET_INFO: 'QS_TARGET_INFO',
} as const;
export type RecordName = (typeof RecordName)[keyof typeof RecordName];

/**
 * How a QS state machine records each kind of transition (QEP, the state-machine processor):
 * the state-machine counts name transitions by kind, and a kind's count opens its records.
 */
export const TRANSITION_RECORD_NAMES = {
  initial: 'QS_QEP_INIT_TRAN',
  /** A composite state drilling down to its initial substate. */
  'state-initial': 'QS_QEP_STATE_INIT',
  transition: 'QS_QEP_TRAN',
  history: 'QS_QEP_TRAN_HIST',
  'entry-point': 'QS_QEP_TRAN_EP',
  'exit-point': 'QS_QEP_TRAN_XP',
} as const;
export type TransitionKind = keyof typeof TRANSITION_RECORD_NAMES;

/** The QS records a state machine is drawn from, by record id: 1 to 9, then 55 to 57. */
export const STATE_MACHINE_RECORD_NAMES: readonly string[] = Object.freeze([
  'QS_QEP_STATE_ENTRY',
  'QS_QEP_STATE_EXIT',
  'QS_QEP_STATE_INIT',
  'QS_QEP_INIT_TRAN',
  'QS_QEP_INTERN_TRAN',
  'QS_QEP_TRAN',
  'QS_QEP_IGNORED',
  'QS_QEP_DISPATCH',
  'QS_QEP_UNHANDLED',
  'QS_QEP_TRAN_HIST',
  'QS_QEP_TRAN_EP',
  'QS_QEP_TRAN_XP',
]);
