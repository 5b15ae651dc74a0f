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
