export type {
  AttributesParameter,
  DecodedParameter,
  IndentationParameter,
  PalmTraceMessage,
  PalmTraceParameter,
  ProcessIdParameter,
  ReservedParameter,
  ThreadIdParameter,
  TimestampParameter,
  TraceDataParameter,
  VendorParameter,
} from './message.js';
export {
  type EmitPalmTraceEvent,
  type PalmTraceEvent,
  PalmTraceParser,
  type PalmTraceParserOptions,
  type PalmTraceParserStats,
} from './parser.js';
export type { PalmTraceProblem, PalmTraceProblemAction, PalmTraceProblemCode } from './problem.js';
export * from './protocol.js';
export {
  PalmReporterStandIn,
  type PalmReporterStandInOptions,
  type ReceivedMessage,
  type ReceivedProblem,
  type ReporterConnection,
  type StandInEvent,
} from './reporter-stand-in.js';
export { encodedMessageLength, encodeMessage } from './serializer.js';
export { DEFAULT_TEXT_ENCODING, decodeText, encodeText, type PalmTextEncoding } from './text-encoding.js';
export {
  encodeTraceLines,
  encodeTraceMessage,
  splitTraceLines,
  TRUNCATION_MARKER,
  type TraceMessageInput,
  timestampLow32,
  traceMessageParameters,
} from './trace-message.js';
export {
  decodeWindows1252,
  encodeWindows1252,
  UNMAPPABLE_REPLACEMENT,
  WINDOWS_1252_TO_UNICODE,
  windows1252ByteOf,
} from './windows-1252.js';
