import type { PalmTraceParameter } from './message.js';
import { PalmErrorClass, TraceKind } from './protocol.js';
import { encodeMessage } from './serializer.js';
import { DEFAULT_TEXT_ENCODING, encodeText, type PalmTextEncoding } from './text-encoding.js';

/** One trace as the bridge has it; becomes exactly one message with one Attributes and one Trace Data. */
export interface TraceMessageInput {
  /** Module id (Palm error class); default `appErrorClass` (0x8000). */
  module?: number;
  /** Default: `TextLine` for `text`, `Binary` for `bytes`. */
  kind?: TraceKind;
  indentation?: number;
  processId?: number;
  threadId?: number;
  /** Milliseconds; only the low 32 bits are sent (the field wraps about every 49.7 days). */
  timestampMs?: number | bigint;
  /** Text to send, encoded with `encoding`. Give `text` or `bytes`, not both. */
  text?: string;
  /** Bytes to send as they are (binary, or text already encoded). */
  bytes?: Uint8Array;
  /** Default Windows-1252; characters it cannot hold become `?` (one per code point). */
  encoding?: PalmTextEncoding;
  /**
   * Cap on the Trace Data bytes (the spec suggests 64 KiB per record). Longer text is cut and
   * ends with {@link TRUNCATION_MARKER}; longer binary data is cut. Default: no cap; data over
   * 65 535 bytes is then split over several Trace Data parameters.
   */
  maxDataBytes?: number;
}

/** Appended to text cut by `maxDataBytes`; ASCII, so the same bytes in every encoding. */
export const TRUNCATION_MARKER = ' [truncated]';

/** Low 32 bits of a millisecond time, as the Time stamp parameter carries it. */
export function timestampLow32(timestampMs: number | bigint): number {
  if (typeof timestampMs === 'bigint') return Number(BigInt.asUintN(32, timestampMs));
  if (!Number.isFinite(timestampMs)) throw new RangeError(`PalmTrace time stamp must be finite, got ${timestampMs}`);
  return (Math.floor(timestampMs) % 2 ** 32) >>> 0;
}

function truncateData(data: Uint8Array, maxDataBytes: number, kind: TraceKind, encoding: PalmTextEncoding): Uint8Array {
  if (data.length <= maxDataBytes) return data;
  if (kind === TraceKind.Binary || maxDataBytes < TRUNCATION_MARKER.length) return data.subarray(0, maxDataBytes);
  let cut = maxDataBytes - TRUNCATION_MARKER.length;
  // Never cut a UTF-8 sequence in two: back off over continuation bytes.
  if (encoding === 'utf-8') while (cut > 0 && (data[cut] & 0xc0) === 0x80) cut--;
  const out = new Uint8Array(cut + TRUNCATION_MARKER.length);
  out.set(data.subarray(0, cut));
  for (let i = 0; i < TRUNCATION_MARKER.length; i++) out[cut + i] = TRUNCATION_MARKER.charCodeAt(i);
  return out;
}

/** The parameters `encodeTraceMessage` writes: Attributes, the optional ones, Trace Data (§4.4 order). */
export function traceMessageParameters(input: TraceMessageInput): PalmTraceParameter[] {
  if ((input.text === undefined) === (input.bytes === undefined)) {
    throw new RangeError('a PalmTrace trace needs exactly one of `text` or `bytes`');
  }
  const encoding = input.encoding ?? DEFAULT_TEXT_ENCODING;
  const kind = input.kind ?? (input.text !== undefined ? TraceKind.TextLine : TraceKind.Binary);
  let data = input.text !== undefined ? encodeText(input.text, encoding) : (input.bytes as Uint8Array);
  if (input.maxDataBytes !== undefined) data = truncateData(data, input.maxDataBytes, kind, encoding);
  const parameters: PalmTraceParameter[] = [
    { type: 'attributes', module: input.module ?? PalmErrorClass.appErrorClass, kind },
  ];
  if (input.indentation !== undefined) parameters.push({ type: 'indentation', level: input.indentation });
  if (input.processId !== undefined) parameters.push({ type: 'processId', processId: input.processId });
  if (input.threadId !== undefined) parameters.push({ type: 'threadId', threadId: input.threadId });
  if (input.timestampMs !== undefined) {
    parameters.push({ type: 'timestamp', timestamp: timestampLow32(input.timestampMs) });
  }
  parameters.push({ type: 'traceData', data });
  return parameters;
}

/** One trace → one message (Uint8Array ready for the socket). Throws RangeError on bad input. */
export function encodeTraceMessage(input: TraceMessageInput): Uint8Array {
  return encodeMessage(traceMessageParameters(input));
}

/**
 * Splits text at line breaks (`\r\n`, `\n` or `\r`). A final break does not start another
 * line, so `"a\n"` is one line; empty text is one empty line.
 */
export function splitTraceLines(text: string): string[] {
  const lines = text.split(/\r\n|\n|\r/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Multi-line text the way POSE sends it (§4.3): one "text + line break" message per line,
 * no line break characters on the wire. Every other field is repeated on each message.
 */
export function encodeTraceLines(
  input: Omit<TraceMessageInput, 'bytes' | 'kind' | 'text'> & { text: string },
): Uint8Array[] {
  return splitTraceLines(input.text).map((line) =>
    encodeTraceMessage({ ...input, kind: TraceKind.TextLine, text: line }),
  );
}
