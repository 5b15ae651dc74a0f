/**
 * PalmTrace wire constants, with the names and values of
 * `shared/spec/palmtrace-protocol.md` §3–§5.
 */

/** The only major version a receiver can read; minor versions stay readable (§3.1). */
export const PALMTRACE_VERSION_MAJOR = 1;
/** What our sender writes as the minor version. */
export const PALMTRACE_VERSION_MINOR = 0;

/** version major + version minor + uint32 total length. */
export const MESSAGE_HEADER_SIZE = 6;
/** opcode + uint16 data length. */
export const PARAMETER_HEADER_SIZE = 3;
/** Largest data of one parameter: its length field is 16 bits. */
export const MAX_PARAMETER_DATA = 0xffff;
/** Header + Attributes (3+5) + empty Trace Data (3) + End (3): the smallest legal message (E7). */
export const MIN_LEGAL_MESSAGE_LENGTH = 20;
/**
 * Header + End: below this a declared length cannot even frame a message, so the framing is
 * lost. Between this and {@link MIN_LEGAL_MESSAGE_LENGTH} the framing is still believable
 * and only the message is dropped (the spec's N3 is 19 bytes long and drops the message).
 */
export const MIN_FRAMED_MESSAGE_LENGTH = MESSAGE_HEADER_SIZE + PARAMETER_HEADER_SIZE;
/** Default cap on a declared message length (§6 rule 2 suggests 1 MiB). */
export const DEFAULT_MAX_MESSAGE_LENGTH = 1024 * 1024;

/** Parameter opcodes (§4). 7–127 are reserved, 128–255 are vendor parameters. */
export const Opcode = Object.freeze({
  End: 0,
  Attributes: 1,
  Indentation: 2,
  ProcessId: 3,
  ThreadId: 4,
  TraceData: 5,
  Timestamp: 6,
} as const);
export type Opcode = (typeof Opcode)[keyof typeof Opcode];

/** First opcode of the user / platform-specific range (bit 7 set). */
export const FIRST_VENDOR_OPCODE = 128;

/** Data length of each fixed-size parameter (§6 rule 6); -1 means variable. */
export const FIXED_PARAMETER_LENGTH: readonly number[] = Object.freeze([0, 5, 1, 4, 4, -1, 4]);

/** The `kind` byte of the Attributes parameter (§4.1). */
export const TraceKind = Object.freeze({
  /** Text; the Reporter appends it to the current line. */
  Text: 0,
  /** Text, then a line break added by the receiver (the text does not carry it). */
  TextLine: 1,
  /** Raw bytes, shown as a hex dump. */
  Binary: 2,
} as const);
export type TraceKind = (typeof TraceKind)[keyof typeof TraceKind];

/** Palm OS error classes used as module ids (§5); applications use `appErrorClass`. */
export const PalmErrorClass = Object.freeze({
  memErrorClass: 0x0100,
  dmErrorClass: 0x0200,
  serErrorClass: 0x0300,
  slkErrorClass: 0x0400,
  sysErrorClass: 0x0500,
  evtErrorClass: 0x0700,
  sndErrorClass: 0x0800,
  almErrorClass: 0x0900,
  timErrorClass: 0x0a00,
  netErrorClass: 0x1200,
  exgErrorClass: 0x1500,
  emuErrorClass: 0x1c00,
  vfsErrorClass: 0x2a00,
  oemErrorClass: 0x7000,
  errInfoClass: 0x7f00,
  appErrorClass: 0x8000,
} as const);
