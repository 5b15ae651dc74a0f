/**
 * What went wrong in the input, one code per rule of the spec's §6, and what the parser did.
 */
export type PalmTraceProblemCode =
  /** §6.1: the major version is not 1. */
  | 'bad-version'
  /** §6.2: the declared length cannot frame a message or exceeds the configured maximum. */
  | 'bad-length'
  /** §6.3: a parameter header or its data runs past the end of the message. */
  | 'parameter-overrun'
  /** §6.3: the message ends without an End parameter. */
  | 'missing-end'
  /** §6.3: bytes follow End inside the declared length. */
  | 'bytes-after-end'
  /** §6.6: a fixed-size parameter (End, Attributes, Indentation, ids, Time stamp) has the wrong length. */
  | 'bad-parameter-length'
  /** The Attributes kind is not 0, 1 or 2. */
  | 'bad-kind'
  /** §6.5: a Trace Data parameter comes before any Attributes. */
  | 'missing-attributes'
  /** §6.5: the message has no Trace Data. */
  | 'missing-trace-data'
  /** §6.4: an opcode 7–127 or ≥ 128 was skipped. */
  | 'unknown-opcode'
  /** §6.7: binary and text Trace Data in one message; shown as text. */
  | 'mixed-kinds'
  /** §6.7: a Trace Data of kind 1 is not the last one; the break is applied at the end. */
  | 'line-break-not-last'
  /** The stream ended inside a message. */
  | 'truncated-message';

export type PalmTraceProblemAction =
  /** Framing is lost: the parser ignores all further input; the connection should be closed. */
  | 'end-connection'
  /** This message is not delivered; parsing goes on at the next message. */
  | 'drop-message'
  /** One parameter was skipped; the message is delivered. */
  | 'skip-parameter'
  /** The message is delivered, normalised as §6.7 says. */
  | 'normalize';

export interface PalmTraceProblem {
  code: PalmTraceProblemCode;
  action: PalmTraceProblemAction;
  /** Stream offset of the first byte of the message concerned. */
  streamOffset: number;
  /** Declared length of that message, when its header was read. */
  messageLength: number | null;
  /** A sentence for people: what was found, where, and what was done. */
  description: string;
}
