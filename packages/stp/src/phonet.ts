import {
  PHONET_MEDIA_TCPIP,
  PHONET_RECEIVER_PC,
  PHONET_RESOURCE,
  PHONET_SENDER_TRACEBOX,
  TB_MARKER,
  TB_TRACE_EXCEPTION_MSG,
  TB_TRACE_MSG,
  TB_WRAPPER_MSG,
  WRAPPER_TYPE_SWD,
} from './constants.js';
import type { DecodeResult } from './decode-result.js';
import { readTraceHeader, type TraceParts, traceParts, writeTraceParts } from './trace-parts.js';

/** Bytes 6–8 of every PhoNet message from the trace box (spec §9.2). */
export interface PhonetAddress {
  receiverObject?: number;
  /** Sender object: the tracebox port. */
  sender: number;
  /** Transaction id 0..255, one counter for all ports. */
  transaction: number;
}

export interface PhonetTraceMessage extends PhonetAddress {
  kind: 'trace';
  master: number;
  channel: number;
  timestamp: bigint;
  data: Uint8Array;
}

export interface PhonetExceptionMessage extends PhonetAddress {
  kind: 'exception';
  master: number;
  channel: number;
  timestamp: bigint;
  code: number;
  data: Uint8Array;
}

export interface PhonetMarkerMessage extends PhonetAddress {
  kind: 'marker';
  type: number;
  timestamp: bigint;
  index: number;
  params: Uint8Array;
  comment: Uint8Array;
}

export interface PhonetSwdMessage extends PhonetAddress {
  kind: 'swd';
  processor: number;
  data: Uint8Array;
}

export type PhonetMessage = PhonetTraceMessage | PhonetExceptionMessage | PhonetMarkerMessage | PhonetSwdMessage;

const MAX_TOTAL = 0xffff;

function frame(total: number, a: PhonetAddress, id: number): Uint8Array {
  if (total > MAX_TOTAL) throw new RangeError(`PhoNet message of ${total} bytes exceeds 0xFFFF`);
  const out = new Uint8Array(total);
  out[0] = PHONET_MEDIA_TCPIP;
  out[1] = PHONET_RECEIVER_PC;
  out[2] = PHONET_SENDER_TRACEBOX;
  out[3] = PHONET_RESOURCE;
  out[4] = (total - 6) >>> 8;
  out[5] = (total - 6) & 0xff;
  out[6] = a.receiverObject ?? 0;
  out[7] = a.sender;
  out[8] = a.transaction;
  out[9] = id;
  return out;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

export function encodePhonetTrace(m: Omit<PhonetTraceMessage, 'kind'>): Uint8Array {
  return encodePhonetTraceParts(m, traceParts(m.master, m.channel, m.timestamp, m.data));
}

/** `encodePhonetTrace` from reusable parts (the decoder's hot path: no views, no BigInt). */
export function encodePhonetTraceParts(address: PhonetAddress, parts: TraceParts): Uint8Array {
  const out = frame(20 + parts.length, address, TB_TRACE_MSG);
  writeTraceParts(out, 10, parts);
  return out;
}

export function encodePhonetException(m: Omit<PhonetExceptionMessage, 'kind'>): Uint8Array {
  const out = frame(21 + m.data.length, m, TB_TRACE_EXCEPTION_MSG);
  out[10] = m.master;
  out[11] = m.channel;
  view(out).setBigUint64(12, BigInt.asUintN(64, m.timestamp));
  out[20] = m.code;
  out.set(m.data, 21);
  return out;
}

export function encodePhonetMarker(m: Omit<PhonetMarkerMessage, 'kind'>): Uint8Array {
  const out = frame(25 + m.params.length + m.comment.length, m, TB_MARKER);
  out[10] = m.type;
  out[11] = 0;
  const v = view(out);
  v.setBigUint64(12, BigInt.asUintN(64, m.timestamp));
  v.setUint32(20, m.index >>> 0);
  out[24] = m.params.length;
  out.set(m.params, 25);
  out.set(m.comment, 25 + m.params.length);
  return out;
}

export function encodePhonetSwd(m: Omit<PhonetSwdMessage, 'kind'>): Uint8Array {
  const out = frame(12 + m.data.length, m, TB_WRAPPER_MSG);
  out[10] = WRAPPER_TYPE_SWD;
  out[11] = m.processor;
  out.set(m.data, 12);
  return out;
}

export type PhonetDecodeResult = DecodeResult<PhonetMessage>;

/** Decodes the PhoNet message starting at `offset`. Never throws. */
export function decodePhonet(bytes: Uint8Array, offset = 0): PhonetDecodeResult {
  const avail = bytes.length - offset;
  if (avail < 6) return { status: 'incomplete' };
  if (
    bytes[offset] !== PHONET_MEDIA_TCPIP ||
    bytes[offset + 1] !== PHONET_RECEIVER_PC ||
    bytes[offset + 2] !== PHONET_SENDER_TRACEBOX ||
    bytes[offset + 3] !== PHONET_RESOURCE
  ) {
    return { status: 'invalid', reason: 'not a trace box PhoNet header' };
  }
  const size = 6 + ((bytes[offset + 4] << 8) | bytes[offset + 5]);
  if (avail < size) return { status: 'incomplete' };
  const p = bytes.subarray(offset, offset + size);
  if (size < 10) return { status: 'invalid', reason: 'message too short' };
  const address = { receiverObject: p[6], sender: p[7], transaction: p[8] };
  const v = view(p);
  switch (p[9]) {
    case TB_TRACE_MSG:
      if (size < 20) return { status: 'invalid', reason: 'trace message too short' };
      return {
        status: 'ok',
        size,
        message: { kind: 'trace', ...address, ...readTraceHeader(p, 10), data: p.slice(20) },
      };
    case TB_TRACE_EXCEPTION_MSG:
      if (size < 21) return { status: 'invalid', reason: 'exception message too short' };
      return {
        status: 'ok',
        size,
        message: { kind: 'exception', ...address, ...readTraceHeader(p, 10), code: p[20], data: p.slice(21) },
      };
    case TB_MARKER: {
      if (size < 25) return { status: 'invalid', reason: 'marker too short' };
      const paramLength = p[24];
      if (25 + paramLength > size) return { status: 'invalid', reason: 'marker parameters overrun' };
      return {
        status: 'ok',
        size,
        message: {
          kind: 'marker',
          ...address,
          type: p[10],
          timestamp: v.getBigUint64(12),
          index: v.getUint32(20),
          params: p.slice(25, 25 + paramLength),
          comment: p.slice(25 + paramLength),
        },
      };
    }
    case TB_WRAPPER_MSG:
      if (size < 12 || p[10] !== WRAPPER_TYPE_SWD) return { status: 'invalid', reason: 'bad wrapper' };
      return { status: 'ok', size, message: { kind: 'swd', ...address, processor: p[11], data: p.slice(12) } };
    default:
      return { status: 'invalid', reason: `unknown PhoNet message id 0x${p[9].toString(16)}` };
  }
}
