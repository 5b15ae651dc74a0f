import { type PalmTraceParameter, UINT32_PARAMETERS, uint32ValueOf } from './message.js';
import {
  FIRST_VENDOR_OPCODE,
  MAX_PARAMETER_DATA,
  MESSAGE_HEADER_SIZE,
  Opcode,
  PALMTRACE_VERSION_MAJOR,
  PALMTRACE_VERSION_MINOR,
  PARAMETER_HEADER_SIZE,
} from './protocol.js';

/**
 * Bytes one parameter takes on the wire. Trace Data over 65 535 bytes becomes several
 * consecutive Trace Data parameters (§4.3), each with its own 3-byte header.
 */
function wireSizeOf(parameter: PalmTraceParameter): number {
  switch (parameter.type) {
    case 'attributes':
      return PARAMETER_HEADER_SIZE + 5;
    case 'indentation':
      return PARAMETER_HEADER_SIZE + 1;
    case 'processId':
    case 'threadId':
    case 'timestamp':
      return PARAMETER_HEADER_SIZE + 4;
    case 'traceData': {
      const pieces = Math.max(1, Math.ceil(parameter.data.length / MAX_PARAMETER_DATA));
      return pieces * PARAMETER_HEADER_SIZE + parameter.data.length;
    }
    case 'vendor':
      return PARAMETER_HEADER_SIZE + parameter.data.length;
  }
}

function checkUint(value: number, bits: 8 | 16 | 32, what: string): void {
  if (!Number.isInteger(value) || value < 0 || value > 2 ** bits - 1) {
    throw new RangeError(`PalmTrace ${what} must be an integer in 0..${2 ** bits - 1}, got ${value}`);
  }
}

/**
 * Refuses what a receiver would drop (§6): the bridge must never send a bad message, so a bad
 * description is a programming error and throws a RangeError naming the field.
 */
function checkMessage(parameters: readonly PalmTraceParameter[]): void {
  let attributesSeen = false;
  let traceDataSeen = false;
  for (const parameter of parameters) {
    switch (parameter.type) {
      case 'attributes':
        checkUint(parameter.module, 16, 'module');
        if (parameter.kind !== 0 && parameter.kind !== 1 && parameter.kind !== 2) {
          throw new RangeError(
            `PalmTrace kind must be 0 (text), 1 (text + line break) or 2 (binary), got ${parameter.kind}`,
          );
        }
        attributesSeen = true;
        break;
      case 'indentation':
        checkUint(parameter.level, 8, 'indentation level');
        break;
      case 'processId':
      case 'threadId':
      case 'timestamp':
        checkUint(uint32ValueOf(parameter), 32, UINT32_PARAMETERS[parameter.type].name);
        break;
      case 'traceData':
        if (!attributesSeen) throw new RangeError('PalmTrace Trace Data must follow an Attributes parameter');
        traceDataSeen = true;
        break;
      case 'vendor':
        checkUint(parameter.opcode, 8, 'vendor opcode');
        if (parameter.opcode < FIRST_VENDOR_OPCODE) {
          throw new RangeError(`PalmTrace vendor opcodes are 128..255, got ${parameter.opcode}`);
        }
        if (parameter.data.length > MAX_PARAMETER_DATA) {
          throw new RangeError(`PalmTrace vendor parameter data is limited to ${MAX_PARAMETER_DATA} bytes`);
        }
        break;
      default:
        throw new RangeError(
          `unknown PalmTrace parameter type ${JSON.stringify((parameter as { type: unknown }).type)}`,
        );
    }
  }
  if (!traceDataSeen) throw new RangeError('a PalmTrace message needs at least one Trace Data parameter');
}

/** Total wire length of the message `encodeMessage` would build, header and End included. */
export function encodedMessageLength(parameters: readonly PalmTraceParameter[]): number {
  let length = MESSAGE_HEADER_SIZE + PARAMETER_HEADER_SIZE;
  for (const parameter of parameters) length += wireSizeOf(parameter);
  return length;
}

/**
 * Small messages are cut from a shared 8 KiB slab, as Node's Buffer pool does: allocating
 * one ArrayBuffer per 100-byte message costs more than encoding it. Regions are never
 * reused, so every message stays valid; a slab lives as long as any message cut from it.
 */
const SLAB_SIZE = 8192;
const SLAB_MAX_MESSAGE = 1024;
let slab = new ArrayBuffer(SLAB_SIZE);
let slabUsed = 0;

function allocateMessage(length: number): Uint8Array {
  if (length > SLAB_MAX_MESSAGE) return new Uint8Array(length);
  if (slabUsed + length > SLAB_SIZE) {
    slab = new ArrayBuffer(SLAB_SIZE);
    slabUsed = 0;
  }
  const out = new Uint8Array(slab, slabUsed, length);
  // Keep regions 8-byte aligned, like the Buffer pool.
  slabUsed += (length + 7) & ~7;
  return out;
}

function writeUint32(out: Uint8Array, at: number, value: number): void {
  out[at] = value >>> 24;
  out[at + 1] = value >>> 16;
  out[at + 2] = value >>> 8;
  out[at + 3] = value;
}

function writeParameterHeader(out: Uint8Array, at: number, opcode: number, dataLength: number): number {
  out[at] = opcode;
  out[at + 1] = dataLength >>> 8;
  out[at + 2] = dataLength;
  return at + PARAMETER_HEADER_SIZE;
}

/**
 * Builds one message: header (version 1.0, big-endian total length including the header),
 * the parameters in the order given, then End. Throws RangeError on a description a receiver
 * would reject. One allocation, of exactly the message's size.
 */
export function encodeMessage(parameters: readonly PalmTraceParameter[]): Uint8Array {
  checkMessage(parameters);
  const length = encodedMessageLength(parameters);
  if (length > 0xffffffff) throw new RangeError(`PalmTrace message of ${length} bytes exceeds the 32-bit length`);
  const out = allocateMessage(length);
  out[0] = PALMTRACE_VERSION_MAJOR;
  out[1] = PALMTRACE_VERSION_MINOR;
  writeUint32(out, 2, length);
  let at = MESSAGE_HEADER_SIZE;
  for (const parameter of parameters) {
    switch (parameter.type) {
      case 'attributes':
        at = writeParameterHeader(out, at, Opcode.Attributes, 5);
        out[at] = parameter.module >>> 8;
        out[at + 1] = parameter.module;
        // at + 2, at + 3: the reserved word stays 00 00.
        out[at + 4] = parameter.kind;
        at += 5;
        break;
      case 'indentation':
        at = writeParameterHeader(out, at, Opcode.Indentation, 1);
        out[at++] = parameter.level;
        break;
      case 'processId':
      case 'threadId':
      case 'timestamp':
        at = writeParameterHeader(out, at, UINT32_PARAMETERS[parameter.type].opcode, 4);
        writeUint32(out, at, uint32ValueOf(parameter));
        at += 4;
        break;
      case 'traceData': {
        const data = parameter.data;
        let from = 0;
        do {
          const piece = Math.min(MAX_PARAMETER_DATA, data.length - from);
          at = writeParameterHeader(out, at, Opcode.TraceData, piece);
          if (piece > 64) out.set(data.subarray(from, from + piece), at);
          else for (let i = 0; i < piece; i++) out[at + i] = data[from + i];
          at += piece;
          from += piece;
        } while (from < data.length);
        break;
      }
      case 'vendor':
        at = writeParameterHeader(out, at, parameter.opcode, parameter.data.length);
        out.set(parameter.data, at);
        at += parameter.data.length;
        break;
    }
  }
  writeParameterHeader(out, at, Opcode.End, 0);
  return out;
}
