import { type DecodedParameter, type PalmTraceMessage, type Uint32Parameter, uint32Parameter } from './message.js';
import type { PalmTraceProblem, PalmTraceProblemAction, PalmTraceProblemCode } from './problem.js';
import {
  DEFAULT_MAX_MESSAGE_LENGTH,
  FIRST_VENDOR_OPCODE,
  FIXED_PARAMETER_LENGTH,
  MESSAGE_HEADER_SIZE,
  MIN_FRAMED_MESSAGE_LENGTH,
  Opcode,
  PALMTRACE_VERSION_MAJOR,
  PARAMETER_HEADER_SIZE,
  TraceKind,
} from './protocol.js';
import { DEFAULT_TEXT_ENCODING, decodeText, type PalmTextEncoding } from './text-encoding.js';

export type PalmTraceEvent =
  | { type: 'message'; message: PalmTraceMessage }
  | { type: 'problem'; problem: PalmTraceProblem };

export type EmitPalmTraceEvent = (event: PalmTraceEvent) => void;

export interface PalmTraceParserOptions {
  /**
   * Largest declared message length accepted (§6 rule 2); a longer one ends the connection.
   * It is also the most the parser ever buffers. Default 1 MiB.
   */
  maxMessageLength?: number;
  /** How text Trace Data is decoded; default Windows-1252. */
  textEncoding?: PalmTextEncoding;
  /**
   * Vendor opcodes (128–255) the caller understands: they stay in `message.parameters` like
   * any other, but are not reported as skipped (§6 rule 4: "skip unless it is a vendor
   * extension we know").
   */
  knownVendorOpcodes?: readonly number[];
}

export interface PalmTraceParserStats {
  bytes: number;
  messages: number;
  droppedMessages: number;
  skippedParameters: number;
  normalizedMessages: number;
  /** Bytes received after the connection was ended, not looked at. */
  ignoredBytes: number;
}

const PARAMETER_NAMES = ['End', 'Attributes', 'Indentation', 'Process ID', 'Thread ID', 'Trace Data', 'Time stamp'];
const EMPTY = new Uint8Array(0);
/** Above this, the buffer of a message that straddled chunks is released once the message is parsed. */
const KEEP_BUFFER_BYTES = 64 * 1024;

/** A message was dropped; carries the reason up to `parseMessage`. */
interface Rejection {
  code: PalmTraceProblemCode;
  detail: string;
}

/** For problem descriptions only: built when a message is rejected, never on the hot path. */
function parameterName(opcode: number): string {
  return opcode < PARAMETER_NAMES.length ? `${PARAMETER_NAMES[opcode]} parameter` : `opcode ${opcode}`;
}

/** Short copies by hand: a `subarray` + `set` pair costs more than copying a typical trace line. */
function copyBytes(from: Uint8Array, start: number, length: number, to: Uint8Array, at: number): void {
  if (length > 64) {
    to.set(from.subarray(start, start + length), at);
    return;
  }
  for (let i = 0; i < length; i++) to[at + i] = from[start + i];
}

function readUint32(buffer: Uint8Array, at: number): number {
  return buffer[at] * 0x1000000 + ((buffer[at + 1] << 16) | (buffer[at + 2] << 8) | buffer[at + 3]);
}

/**
 * Streaming PalmTrace decoder for one TCP connection, in the style of pg-protocol's parser:
 * `push` takes chunks cut anywhere, parses every complete message straight out of the chunk
 * and keeps only the unfinished tail of the last message, in one buffer that never holds more
 * than `maxMessageLength` bytes. Never throws on input: each bad-input rule of §6 becomes a
 * `problem` event. After an `end-connection` problem it ignores everything.
 */
export class PalmTraceParser {
  private readonly maxMessageLength: number;
  private readonly textEncoding: PalmTextEncoding;
  /** 1 at each vendor opcode the caller understands. */
  private readonly knownVendorOpcodes: Uint8Array;
  /** Holds the start of a message that a chunk boundary cut; `pendingLength` bytes are valid. */
  private pending: Uint8Array = EMPTY;
  private pendingLength = 0;
  /** Declared length of the pending message, 0 while its header is incomplete. */
  private pendingDeclared = 0;
  /** Stream offset of the next message's first byte. */
  private messageOffset = 0;
  private connectionEnded = false;
  /**
   * Scratch list of Trace Data (offset, length, kind, attributes ordinal) quadruples, reused
   * across messages. The ordinal tells which Attributes parameter the data falls under.
   */
  private traceData = new Int32Array(64);
  /** Quadruples used in `traceData` by the message being decoded. */
  private traceDataCount = 0;
  private readonly counters: PalmTraceParserStats = {
    bytes: 0,
    messages: 0,
    droppedMessages: 0,
    skippedParameters: 0,
    normalizedMessages: 0,
    ignoredBytes: 0,
  };

  constructor(options: PalmTraceParserOptions = {}) {
    this.maxMessageLength = options.maxMessageLength ?? DEFAULT_MAX_MESSAGE_LENGTH;
    if (!Number.isInteger(this.maxMessageLength) || this.maxMessageLength < MIN_FRAMED_MESSAGE_LENGTH) {
      throw new RangeError(`maxMessageLength must be an integer ≥ ${MIN_FRAMED_MESSAGE_LENGTH}`);
    }
    this.textEncoding = options.textEncoding ?? DEFAULT_TEXT_ENCODING;
    this.knownVendorOpcodes = new Uint8Array(256);
    for (const opcode of options.knownVendorOpcodes ?? []) this.knownVendorOpcodes[opcode & 0xff] = 1;
  }

  /** True once framing was lost (bad version or length): the caller should close the connection. */
  get ended(): boolean {
    return this.connectionEnded;
  }

  /** Bytes held for an unfinished message. */
  get bufferedBytes(): number {
    return this.pendingLength;
  }

  /** Memory held for unfinished messages: never more than `maxMessageLength`. */
  get bufferCapacity(): number {
    return this.pending.length;
  }

  stats(): PalmTraceParserStats {
    return { ...this.counters };
  }

  push(chunk: Uint8Array, emit: EmitPalmTraceEvent): void {
    if (this.connectionEnded) {
      this.counters.ignoredBytes += chunk.length;
      return;
    }
    this.counters.bytes += chunk.length;
    let at = 0;
    if (this.pendingLength > 0) {
      at = this.completePending(chunk, emit);
      if (at < 0 || this.pendingLength > 0) return;
    }
    const end = chunk.length;
    while (at < end) {
      const length = this.readHeader(chunk, at, end - at, emit);
      if (length < 0) return;
      if (length === 0 || end - at < length) {
        this.keepTail(chunk, at, end, length);
        return;
      }
      this.parseMessage(chunk, at, length, emit);
      at += length;
    }
  }

  /** The stream has ended: an unfinished message is reported as truncated. */
  end(emit: EmitPalmTraceEvent): void {
    if (this.connectionEnded || this.pendingLength === 0) return;
    const declared = this.pendingDeclared;
    this.counters.droppedMessages++;
    this.report(
      emit,
      'truncated-message',
      'drop-message',
      declared || null,
      `stream ended ${this.pendingLength} bytes into a message` +
        (declared ? ` of ${declared} bytes` : ' (inside its header)') +
        `; message dropped`,
    );
    this.pendingLength = 0;
    this.pendingDeclared = 0;
    this.pending = EMPTY;
  }

  /**
   * Checks a header starting at `at`: the major version as soon as one byte is there, the
   * length once all six are. Returns the declared length, 0 if more bytes are needed, -1 if
   * the connection was ended.
   */
  private readHeader(buffer: Uint8Array, at: number, available: number, emit: EmitPalmTraceEvent): number {
    const major = buffer[at];
    if (major !== PALMTRACE_VERSION_MAJOR) {
      this.endConnection(
        emit,
        'bad-version',
        null,
        `major version ${major} (only ${PALMTRACE_VERSION_MAJOR}.x can be read); framing cannot be trusted`,
      );
      return -1;
    }
    if (available < MESSAGE_HEADER_SIZE) return 0;
    const length = readUint32(buffer, at + 2);
    if (length < MIN_FRAMED_MESSAGE_LENGTH || length > this.maxMessageLength) {
      this.endConnection(
        emit,
        'bad-length',
        length,
        `declared message length ${length} is ` +
          (length < MIN_FRAMED_MESSAGE_LENGTH
            ? `below ${MIN_FRAMED_MESSAGE_LENGTH} (header + End)`
            : `above the maximum of ${this.maxMessageLength}`) +
          '; framing is lost',
      );
      return -1;
    }
    return length;
  }

  /** Copies the unfinished tail of `chunk` into the pending buffer (the chunk is not kept). */
  private keepTail(chunk: Uint8Array, from: number, to: number, declared: number): void {
    const tail = to - from;
    this.reservePending(Math.max(declared, MESSAGE_HEADER_SIZE), 0);
    this.pending.set(chunk.subarray(from, to));
    this.pendingLength = tail;
    this.pendingDeclared = declared;
  }

  /** Makes the pending buffer hold `size` bytes, keeping its first `keep` bytes. */
  private reservePending(size: number, keep: number): void {
    if (this.pending.length >= size) return;
    // size ≤ maxMessageLength always holds (a longer declared length ends the connection).
    const grown = new Uint8Array(Math.min(this.maxMessageLength, Math.max(size, 2 * this.pending.length, 256)));
    if (keep > 0) grown.set(this.pending.subarray(0, keep));
    this.pending = grown;
  }

  /** Feeds the pending message from `chunk`; returns the bytes of `chunk` used, or -1 if the connection ended. */
  private completePending(chunk: Uint8Array, emit: EmitPalmTraceEvent): number {
    let at = 0;
    while (at < chunk.length) {
      const target = this.pendingDeclared || MESSAGE_HEADER_SIZE;
      const take = Math.min(target - this.pendingLength, chunk.length - at);
      this.pending.set(chunk.subarray(at, at + take), this.pendingLength);
      this.pendingLength += take;
      at += take;
      if (this.pendingLength < target) return at;
      if (this.pendingDeclared === 0) {
        const length = this.readHeader(this.pending, 0, this.pendingLength, emit);
        if (length < 0) return -1;
        this.pendingDeclared = length;
        this.reservePending(length, this.pendingLength);
        continue;
      }
      const length = this.pendingDeclared;
      this.pendingLength = 0;
      this.pendingDeclared = 0;
      this.parseMessage(this.pending, 0, length, emit);
      if (this.pending.length > KEEP_BUFFER_BYTES) this.pending = EMPTY;
      return at;
    }
    return at;
  }

  private endConnection(
    emit: EmitPalmTraceEvent,
    code: PalmTraceProblemCode,
    messageLength: number | null,
    detail: string,
  ): void {
    this.connectionEnded = true;
    this.pending = EMPTY;
    this.pendingLength = 0;
    this.report(emit, code, 'end-connection', messageLength, `${detail}; ending the connection`);
  }

  private report(
    emit: EmitPalmTraceEvent,
    code: PalmTraceProblemCode,
    action: PalmTraceProblemAction,
    messageLength: number | null,
    detail: string,
  ): void {
    const where = `message at stream offset ${this.messageOffset}`;
    emit({
      type: 'problem',
      problem: { code, action, streamOffset: this.messageOffset, messageLength, description: `${where}: ${detail}` },
    });
  }

  /** Parses the complete message `buffer[start, start + length)` and emits it or the reason it was dropped. */
  private parseMessage(buffer: Uint8Array, start: number, length: number, emit: EmitPalmTraceEvent): void {
    const result = this.decodeMessage(buffer, start, length);
    if (result === null) {
      const rejection = this.rejection as Rejection;
      this.counters.droppedMessages++;
      this.report(emit, rejection.code, 'drop-message', length, `${rejection.detail}; message dropped`);
    } else {
      for (const parameter of result.parameters) {
        const unknown =
          parameter.type === 'reserved' ||
          (parameter.type === 'vendor' && this.knownVendorOpcodes[parameter.opcode] === 0);
        if (unknown) {
          this.counters.skippedParameters++;
          const range = parameter.type === 'vendor' ? 'vendor opcode' : 'reserved opcode';
          this.report(
            emit,
            'unknown-opcode',
            'skip-parameter',
            length,
            `skipped ${range} ${parameter.opcode} (${parameter.data.length} data bytes)`,
          );
        }
      }
      this.checkKinds(result, emit);
      this.counters.messages++;
      emit({ type: 'message', message: result });
    }
    this.messageOffset += length;
  }

  /** §6.7: reports (and already normalised in `decodeMessage`) kind-1 not last and mixed kinds. */
  private checkKinds(message: PalmTraceMessage, emit: EmitPalmTraceEvent): void {
    const pieces = this.traceData;
    const count = this.traceDataCount;
    const lastOrdinal = pieces[(count - 1) * 4 + 3];
    let binary = 0;
    let lineBreakNotLast = false;
    for (let i = 0; i < count; i++) {
      const kind = pieces[i * 4 + 2];
      if (kind === TraceKind.Binary) binary++;
      // Consecutive Trace Data under one Attributes are one run (E5): only a later Attributes
      // can put data after a line break.
      if (kind === TraceKind.TextLine && pieces[i * 4 + 3] !== lastOrdinal) lineBreakNotLast = true;
    }
    let normalized = false;
    if (binary > 0 && binary < count) {
      normalized = true;
      this.report(
        emit,
        'mixed-kinds',
        'normalize',
        message.length,
        `${binary} of ${count} Trace Data parameters are binary, the others text; shown as text`,
      );
    }
    if (lineBreakNotLast) {
      normalized = true;
      this.report(
        emit,
        'line-break-not-last',
        'normalize',
        message.length,
        'Trace Data of kind 1 (line break) is followed by data under a later Attributes; the line break is applied at the end',
      );
    }
    if (normalized) this.counters.normalizedMessages++;
  }

  /** Why the last `decodeMessage` returned null. */
  private rejection: Rejection | null = null;

  private reject(code: PalmTraceProblemCode, detail: string): null {
    this.rejection = { code, detail };
    return null;
  }

  private decodeMessage(buffer: Uint8Array, start: number, length: number): PalmTraceMessage | null {
    const end = start + length;
    let traceData = this.traceData;
    let pieceCount = 0;
    const parameters: DecodedParameter[] = [];
    let kind = -1;
    let attributesOrdinal = 0;
    let module = 0;
    let firstModule = -1;
    let indentation: number | null = null;
    const ids: Pick<PalmTraceMessage, Uint32Parameter['type']> = { processId: null, threadId: null, timestamp: null };
    let dataBytes = 0;
    let at = start + MESSAGE_HEADER_SIZE;
    let endSeen = false;
    while (at < end) {
      const parameterOffset = at - start;
      if (end - at < PARAMETER_HEADER_SIZE) {
        return this.reject(
          'parameter-overrun',
          `${end - at} bytes left at byte ${parameterOffset}, too few for a parameter header`,
        );
      }
      const opcode = buffer[at];
      const dataLength = (buffer[at + 1] << 8) | buffer[at + 2];
      const data = at + PARAMETER_HEADER_SIZE;
      if (data + dataLength > end) {
        return this.reject(
          'parameter-overrun',
          `${parameterName(opcode)} at byte ${parameterOffset} declares ${dataLength} data bytes, only ${end - data} remain`,
        );
      }
      if (opcode < FIXED_PARAMETER_LENGTH.length) {
        const expected = FIXED_PARAMETER_LENGTH[opcode];
        if (expected >= 0 && dataLength !== expected) {
          return this.reject(
            'bad-parameter-length',
            `${parameterName(opcode)} at byte ${parameterOffset} has ${dataLength} data bytes, the spec requires ${expected}`,
          );
        }
      }
      at = data + dataLength;
      switch (opcode) {
        case Opcode.End:
          endSeen = true;
          if (at !== end) {
            return this.reject('bytes-after-end', `${end - at} bytes follow End inside the declared length`);
          }
          break;
        case Opcode.Attributes: {
          const newKind = buffer[data + 4];
          if (newKind > TraceKind.Binary) {
            return this.reject(
              'bad-kind',
              `Attributes at byte ${parameterOffset} has kind ${newKind} (0 text, 1 text + line break, 2 binary)`,
            );
          }
          kind = newKind;
          attributesOrdinal++;
          module = (buffer[data] << 8) | buffer[data + 1];
          parameters.push({ type: 'attributes', module, kind: newKind as TraceKind });
          break;
        }
        case Opcode.Indentation:
          indentation = buffer[data];
          parameters.push({ type: 'indentation', level: indentation });
          break;
        case Opcode.ProcessId:
        case Opcode.ThreadId:
        case Opcode.Timestamp: {
          const type =
            opcode === Opcode.ProcessId ? 'processId' : opcode === Opcode.ThreadId ? 'threadId' : 'timestamp';
          const value = readUint32(buffer, data);
          ids[type] = value;
          parameters.push(uint32Parameter(type, value));
          break;
        }
        case Opcode.TraceData:
          if (kind < 0) {
            return this.reject(
              'missing-attributes',
              `Trace Data at byte ${parameterOffset} comes before any Attributes`,
            );
          }
          if (firstModule < 0) firstModule = module;
          if ((pieceCount + 1) * 4 > traceData.length) {
            const grown = new Int32Array(traceData.length * 2);
            grown.set(traceData);
            this.traceData = traceData = grown;
          }
          traceData[pieceCount * 4] = data;
          traceData[pieceCount * 4 + 1] = dataLength;
          traceData[pieceCount * 4 + 2] = kind;
          traceData[pieceCount * 4 + 3] = attributesOrdinal;
          pieceCount++;
          // Placeholder; filled with a view of the joined data below.
          parameters.push({ type: 'traceData', data: EMPTY });
          dataBytes += dataLength;
          break;
        default:
          parameters.push({
            type: opcode >= FIRST_VENDOR_OPCODE ? 'vendor' : 'reserved',
            opcode,
            data: buffer.slice(data, data + dataLength),
          });
      }
      if (endSeen) break;
    }
    if (!endSeen) return this.reject('missing-end', 'the message ends without an End parameter');
    this.traceDataCount = pieceCount;
    if (pieceCount === 0) return this.reject('missing-trace-data', 'the message has no Trace Data parameter');

    // One copy per message: all Trace Data joined; each Trace Data parameter is a view of it.
    const joined = new Uint8Array(dataBytes);
    let binary = true;
    let lineBreak = false;
    let piece = 0;
    let filled = 0;
    for (const parameter of parameters) {
      if (parameter.type !== 'traceData') continue;
      const from = traceData[piece * 4];
      const size = traceData[piece * 4 + 1];
      const pieceKind = traceData[piece * 4 + 2];
      copyBytes(buffer, from, size, joined, filled);
      parameter.data = size === dataBytes ? joined : joined.subarray(filled, filled + size);
      filled += size;
      if (pieceKind !== TraceKind.Binary) binary = false;
      if (pieceKind === TraceKind.TextLine) lineBreak = true;
      piece++;
    }
    let text: string | null = null;
    if (!binary) {
      let textEnd = joined.length;
      // No NUL terminator is needed (§4.3); a sender that adds one should not show it.
      while (textEnd > 0 && joined[textEnd - 1] === 0) textEnd--;
      text = decodeText(textEnd === joined.length ? joined : joined.subarray(0, textEnd), this.textEncoding);
    }
    return {
      streamOffset: this.messageOffset,
      length,
      versionMinor: buffer[start + 1],
      module: firstModule,
      kind: binary ? TraceKind.Binary : lineBreak ? TraceKind.TextLine : TraceKind.Text,
      lineBreak,
      indentation,
      ...ids,
      data: joined,
      text,
      parameters,
    };
  }
}
