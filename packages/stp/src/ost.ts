import {
  OST_ENTITY_DEFAULT,
  OST_ENTITY_TRACEBOX,
  OST_PROTOCOL_TRACEBOX,
  OST_PROTOCOL_WRAPPER,
  OST_PROTOCOL_XTIV3,
  OST_VERSION,
  TB_MARKER,
  WRAPPER_TYPE_SWD,
} from './constants.js';
import type { DecodeResult } from './decode-result.js';
import { readTraceHeader, readU64, type TraceParts, traceParts, writeTraceParts } from './trace-parts.js';

/** An OST XTI v3 trace message (protocol 0x84, spec §9.1). */
export interface OstTraceMessage {
  kind: 'trace';
  port: number;
  master: number;
  channel: number;
  /** Full 64-bit timestamp field, flag bits included (see `outputTimestamp`). */
  timestamp: bigint;
  data: Uint8Array;
}

/** An OST trace-box marker (protocol 0x81, spec §10). */
export interface OstMarkerMessage {
  kind: 'marker';
  type: number;
  sender: number;
  timestamp: bigint;
  index: number;
  params: Uint8Array;
  comment: Uint8Array;
}

/** An OST wrapper message carrying SWD data (protocol 0x99). */
export interface OstSwdMessage {
  kind: 'swd';
  port: number;
  processor: number;
  data: Uint8Array;
}

export type OstMessage = OstTraceMessage | OstMarkerMessage | OstSwdMessage;

/** Largest OST body (bytes after byte 3, or after byte 7 in the extended form) that fits 0xFFFF in all. */
const MAX_TOTAL = 0xffff;

/** Where the body starts: after the 4-byte header, or after the 8-byte one with the extended length. */
const bodyOffset = (body: number) => (body > 255 ? 8 : 4);

/** A message of `body` bytes after its header, with the header written. */
function header(protocol: number, entity: number, body: number): Uint8Array {
  const extended = body > 255;
  const total = body + (extended ? 8 : 4);
  if (total > MAX_TOTAL) throw new RangeError(`OST message of ${total} bytes exceeds 0xFFFF`);
  const out = new Uint8Array(total);
  out[0] = OST_VERSION;
  out[1] = entity;
  out[2] = protocol;
  if (extended) {
    out[3] = 0;
    out[4] = body & 0xff;
    out[5] = (body >>> 8) & 0xff;
    out[6] = (body >>> 16) & 0xff;
    out[7] = body >>> 24;
    return out;
  }
  out[3] = body;
  return out;
}

function writeU64(out: Uint8Array, offset: number, value: bigint): void {
  const v = BigInt.asUintN(64, value);
  writeU32(out, offset, Number(v >> 32n));
  writeU32(out, offset + 4, Number(v & 0xffffffffn));
}

function writeU32(out: Uint8Array, offset: number, v: number): void {
  out[offset] = v >>> 24;
  out[offset + 1] = v >>> 16;
  out[offset + 2] = v >>> 8;
  out[offset + 3] = v;
}

/** Encodes an XTI v3 trace message; master and channel are one byte each in this layout. */
export function encodeOstTrace(m: Omit<OstTraceMessage, 'kind'>): Uint8Array {
  return encodeOstTraceParts(m.port, traceParts(m.master, m.channel, m.timestamp, m.data));
}

/** `encodeOstTrace` from reusable parts (the decoder's hot path: no views, no BigInt). */
export function encodeOstTraceParts(port: number, parts: TraceParts): Uint8Array {
  const body = 11 + parts.length;
  const out = header(OST_PROTOCOL_XTIV3, OST_ENTITY_DEFAULT, body);
  const offset = bodyOffset(body);
  out[offset] = port;
  writeTraceParts(out, offset + 1, parts);
  return out;
}

export function encodeOstMarker(m: Omit<OstMarkerMessage, 'kind'>): Uint8Array {
  const body = 3 + 8 + 4 + 1 + m.params.length + m.comment.length;
  const out = header(OST_PROTOCOL_TRACEBOX, OST_ENTITY_TRACEBOX, body);
  const offset = bodyOffset(body);
  out[offset] = TB_MARKER;
  out[offset + 1] = m.type;
  out[offset + 2] = m.sender;
  writeU64(out, offset + 3, m.timestamp);
  writeU32(out, offset + 11, m.index >>> 0);
  out[offset + 15] = m.params.length;
  out.set(m.params, offset + 16);
  out.set(m.comment, offset + 16 + m.params.length);
  return out;
}

export function encodeOstSwd(m: Omit<OstSwdMessage, 'kind'>): Uint8Array {
  const out = header(OST_PROTOCOL_WRAPPER, OST_ENTITY_DEFAULT, 3 + m.data.length);
  const offset = bodyOffset(3 + m.data.length);
  out[offset] = WRAPPER_TYPE_SWD;
  out[offset + 1] = m.port;
  out[offset + 2] = m.processor;
  out.set(m.data, offset + 3);
  return out;
}

export type OstDecodeResult = DecodeResult<OstMessage>;

/** Decodes the OST message starting at `offset`. Never throws. */
export function decodeOst(bytes: Uint8Array, offset = 0): OstDecodeResult {
  const avail = bytes.length - offset;
  if (avail < 4) return { status: 'incomplete' };
  if (bytes[offset] !== OST_VERSION) return { status: 'invalid', reason: 'not OST version 0x10' };
  let body = bytes[offset + 3];
  let start = offset + 4;
  if (body === 0) {
    if (avail < 8) return { status: 'incomplete' };
    body = (bytes[offset + 4] | (bytes[offset + 5] << 8) | (bytes[offset + 6] << 16) | (bytes[offset + 7] << 24)) >>> 0;
    start = offset + 8;
    if (body + 8 > MAX_TOTAL) return { status: 'invalid', reason: 'extended length beyond 0xFFFF' };
  }
  const end = start + body;
  if (end > bytes.length) return { status: 'incomplete' };
  const size = end - offset;
  const p = bytes.subarray(start, end);
  switch (bytes[offset + 2]) {
    case OST_PROTOCOL_XTIV3:
      if (p.length < 11) return { status: 'invalid', reason: 'trace message too short' };
      return {
        status: 'ok',
        size,
        message: { kind: 'trace', port: p[0], ...readTraceHeader(p, 1), data: p.slice(11) },
      };
    case OST_PROTOCOL_TRACEBOX: {
      if (p.length < 16 || p[0] !== TB_MARKER) return { status: 'invalid', reason: 'bad marker' };
      const paramLength = p[15];
      if (16 + paramLength > p.length) return { status: 'invalid', reason: 'marker parameters overrun' };
      return {
        status: 'ok',
        size,
        message: {
          kind: 'marker',
          type: p[1],
          sender: p[2],
          timestamp: readU64(p, 3),
          index: new DataView(p.buffer, p.byteOffset, p.byteLength).getUint32(11),
          params: p.slice(16, 16 + paramLength),
          comment: p.slice(16 + paramLength),
        },
      };
    }
    case OST_PROTOCOL_WRAPPER:
      if (p.length < 3 || p[0] !== WRAPPER_TYPE_SWD) return { status: 'invalid', reason: 'bad wrapper' };
      return { status: 'ok', size, message: { kind: 'swd', port: p[1], processor: p[2], data: p.slice(3) } };
    default:
      return { status: 'invalid', reason: `unknown OST protocol 0x${bytes[offset + 2].toString(16)}` };
  }
}
