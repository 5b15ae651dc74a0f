import { Opcode, type TraceKind } from './protocol.js';

/** Attributes (opcode 1): module id, reserved word (always written 0) and data kind. */
export interface AttributesParameter {
  type: 'attributes';
  /** 16-bit module id, a Palm OS error class (`PalmErrorClass.appErrorClass` for applications). */
  module: number;
  kind: TraceKind;
}
/** Indentation level (opcode 2), 8 bits. */
export interface IndentationParameter {
  type: 'indentation';
  level: number;
}
/** Process ID (opcode 3), 32 bits unsigned. */
export interface ProcessIdParameter {
  type: 'processId';
  processId: number;
}
/** Thread ID (opcode 4), 32 bits unsigned. */
export interface ThreadIdParameter {
  type: 'threadId';
  threadId: number;
}
/** Time stamp (opcode 6), 32 bits unsigned; the unit is not documented (we use milliseconds). */
export interface TimestampParameter {
  type: 'timestamp';
  timestamp: number;
}
/** The 32-bit unsigned parameters; each carries its value under its own type's name. */
export type Uint32Parameter = ProcessIdParameter | ThreadIdParameter | TimestampParameter;

/** The 32-bit parameters by type: their opcode, and what the spec calls them. */
export const UINT32_PARAMETERS: Readonly<Record<Uint32Parameter['type'], { opcode: Opcode; name: string }>> =
  Object.freeze({
    processId: { opcode: Opcode.ProcessId, name: 'process id' },
    threadId: { opcode: Opcode.ThreadId, name: 'thread id' },
    timestamp: { opcode: Opcode.Timestamp, name: 'time stamp' },
  });

/** The value a 32-bit parameter carries. */
export function uint32ValueOf(parameter: Uint32Parameter): number {
  if (parameter.type === 'processId') return parameter.processId;
  return parameter.type === 'threadId' ? parameter.threadId : parameter.timestamp;
}

/** The 32-bit parameter of `type` carrying `value`. */
export function uint32Parameter(type: Uint32Parameter['type'], value: number): Uint32Parameter {
  if (type === 'processId') return { type, processId: value };
  return type === 'threadId' ? { type, threadId: value } : { type, timestamp: value };
}

/**
 * Trace Data (opcode 5): text or bytes, as the kind of the Attributes in force says. The
 * encoder splits data over 65 535 bytes into consecutive Trace Data parameters.
 */
export interface TraceDataParameter {
  type: 'traceData';
  data: Uint8Array;
}
/** A user / platform-specific parameter (opcodes 128–255); receivers skip it. */
export interface VendorParameter {
  type: 'vendor';
  opcode: number;
  data: Uint8Array;
}
/** A parameter with an opcode reserved for future standard use (7–127); only ever decoded. */
export interface ReservedParameter {
  type: 'reserved';
  opcode: number;
  data: Uint8Array;
}

/** What a sender may put in a message, in order. End is not listed: the encoder always writes it last. */
export type PalmTraceParameter =
  | AttributesParameter
  | IndentationParameter
  | ProcessIdParameter
  | ThreadIdParameter
  | TimestampParameter
  | TraceDataParameter
  | VendorParameter;

/** What a receiver may find in a message (End excluded). */
export type DecodedParameter = PalmTraceParameter | ReservedParameter;

/** One decoded message, with its parameters typed and its Trace Data joined. */
export interface PalmTraceMessage {
  /** Byte offset of the message's first byte in the stream given to the parser. */
  streamOffset: number;
  /** Total length from the header (header included). */
  length: number;
  versionMinor: number;
  /** Module of the Attributes in force at the first Trace Data. */
  module: number;
  /**
   * Kind of the message as shown (§6 rule 7): `Binary` only if every Trace Data is binary;
   * otherwise text, `TextLine` if any Trace Data was sent as kind 1 (the break goes at the end).
   */
  kind: TraceKind;
  /** The receiver ends the line after this message's text. */
  lineBreak: boolean;
  indentation: number | null;
  processId: number | null;
  threadId: number | null;
  timestamp: number | null;
  /** All Trace Data joined in order, exactly as sent (the message's own copy). */
  data: Uint8Array;
  /** `data` decoded with the parser's text encoding, trailing NULs dropped; null for binary. */
  text: string | null;
  /** Every parameter but End, in wire order; Trace Data entries are views into `data`. */
  parameters: DecodedParameter[];
}
