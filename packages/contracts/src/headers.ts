/** Header names of the bus contract (DESIGN.md). */
export const Headers = {
  /** JetStream de-duplication id: `<session>.<chunk>`. */
  MsgId: 'Nats-Msg-Id',
  /** Id of the link session: a new one at every connect or gateway start. */
  Session: 'th-session',
  /** Index of the chunk within its session: 0, 1, 2, ... */
  Chunk: 'th-chunk',
  /** Gateway receive time of the chunk, nanoseconds since the Unix epoch, decimal. */
  RecvNs: 'th-recv-ns',
  /** Bytes the gateway knows it dropped before this chunk (bounded buffer overflow). */
  Lost: 'th-lost',
  /** Idle time of the link before this chunk's first byte, ns (STP v1 resynchronises on pauses). */
  PauseNs: 'th-pause-ns',
  /**
   * The pauses inside a chunk (timing-sensitive links): `offset:pauseNs:recvNs` for each
   * stretch of the chunk read without a pause, comma-separated, the first at offset 0. Present
   * only when the chunk holds more than one; `th-pause-ns` is the first's pause and
   * `th-recv-ns` the last's receive time.
   */
  Segments: 'th-segments',
  /** Present (value `1`) on the empty chunk that ends a session. */
  Eos: 'th-eos',
  /**
   * Link settings the gateway was given for this link (TRACEHUB_LINKS query parameters,
   * `tracehub replay` flags), JSON; they override the link's stored settings for the session.
   */
  Settings: 'th-settings',
  /**
   * Present (value `1`) on every chunk of a session that is a capture of its own (a file or
   * stdin replayed), not a target connecting again: its decoder starts from nothing instead of
   * keeping what the link's previous session knew (QS dictionaries).
   */
  Capture: 'th-capture',
  /**
   * A marker asked for on the live link (`LinkMarker`, JSON), on an empty chunk of its own:
   * the decoder puts it after every byte read before it (a trace box user or time-base marker).
   */
  Marker: 'th-marker',
} as const;

export function msgId(session: string, chunk: number): string {
  return `${session}.${chunk}`;
}
