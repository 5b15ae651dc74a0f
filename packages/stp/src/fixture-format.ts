import { MAX_DECIMAL_DIGITS, OutputBuffer, putBytes, putHex, putUint } from '@tracehub/contracts/output-buffer';
import { CLOSED_BY_NAMES, EXCEPTION_NAMES, MARKER_NAMES } from './constants.js';
import { bytesToHex } from './hex.js';
import type { StpPacketParser } from './packet-parser.js';
import { PKT_NAME, PKT_PAYLOAD, Pkt } from './packets.js';
import type { MessageBuffer } from './reassembler.js';
import { sha256Hex } from './sha256.js';

/**
 * The JSON shapes of the reference vectors (spec §13): one packet-list entry per packet, and
 * the ordered `ost` / `phonet` events. The CLI prints them (`--format packets|events`) and
 * the golden tests compare them with the `.expected.json` files.
 */
export type PacketEntry = Record<string, string | number>;
export type StpEvent = Record<string, unknown>;

/** Beyond this length the events carry a digest, a head and a tail instead of the data. */
const INLINE_DATA_MAX = 4096;
const HEAD_TAIL = 32;
const QUOTE = 0x22;

/** Written and read back at once (`packetJson`, the start of event lines). */
const scratch = new OutputBuffer(null, 1024);

/** The packet the parser has just reported, as a fixture packet-list entry. */
export function packetEntry(parser: StpPacketParser): PacketEntry {
  return JSON.parse(packetJson(parser)) as PacketEntry;
}

/** `packetEntry` as its JSON text. */
export function packetJson(parser: StpPacketParser): string {
  writePacketJson(scratch, parser);
  return scratch.takeText();
}

/** Recorded nibbles `[start, start + count)` of the parser's packet (as far as they are recorded). */
function nibbles(out: OutputBuffer, parser: StpPacketParser, start: number, count: number): void {
  out.hexNibbles(parser.pktNibbles, start, Math.max(start, Math.min(start + count, parser.pktNibbles.length)));
}

/**
 * `packetEntry` written as JSON text (the `--format packets` hot path: one line per packet, no
 * string or object in between). Keys in the fixtures' order: v2 `nib, pkt, val, ts_field, ts,
 * len`; v1 and pseudo-packets `nib, len, pkt, …`.
 */
export function writePacketJson(out: OutputBuffer, parser: StpPacketParser): void {
  const kind = parser.pktKind;
  const pkt = PKT_NAME[kind];
  out.ascii('{"nib":');
  out.uint(parser.pktStart);
  const pseudo = kind === Pkt.ASYNC || kind === Pkt.NULL_SYNC || kind === Pkt.DISCARDED || kind === Pkt.TRUNCATED;
  if (pseudo || kind === Pkt.ILLEGAL || parser.version === 1) {
    out.ascii(',"len":');
    out.uint(parser.pktLen);
    out.ascii(',"pkt":"');
    out.ascii(pkt);
    out.ascii('"');
    if (pseudo) {
      out.ascii('}');
      return;
    }
    if (kind === Pkt.ILLEGAL) {
      out.ascii(',"nibbles":"');
      nibbles(out, parser, 0, parser.pktLen);
      out.ascii('"}');
      return;
    }
  } else {
    out.ascii(',"pkt":"');
    out.ascii(pkt);
    out.ascii('"');
  }
  const payload = PKT_PAYLOAD[kind];
  if (payload !== 0) {
    out.ascii(payload < 0 ? ',"val":"' : ',"val":"0x');
    nibbles(out, parser, parser.payloadStart, parser.payloadLen);
    out.ascii('"');
  }
  if (parser.version === 1) {
    if (parser.tsLen > 0) writeTs(out, ',"ts":"', parser);
    out.ascii('}');
    return;
  }
  if (parser.tsLen > 0) {
    out.ascii(',"ts_field":"');
    nibbles(out, parser, parser.tsStart, parser.tsLen);
    writeTs(out, '","ts":"', parser);
  }
  out.ascii(',"len":');
  out.uint(parser.pktLen);
  out.ascii('}');
}

/** The running timestamp after `key`, with the closing quote. */
function writeTs(out: OutputBuffer, key: string, parser: StpPacketParser): void {
  out.ascii(key);
  writeHex64(out, parser.tsFixed ? 0 : parser.tsHi, parser.tsLo, parser.tsFixed ? 2 : 16);
  out.ascii('"');
}

/** What `hex64` gives: `0x` and the low `digits` upper-case hex digits of hi:lo. */
function writeHex64(out: OutputBuffer, hi: number, lo: number, digits: number): void {
  out.ascii('0x');
  if (digits > 8) out.hex32(hi, digits - 8);
  out.hex32(lo, Math.min(digits, 8));
}

/**
 * A message event (spec §13) written as JSON text: the `--format events` hot path (one line per
 * message, no string or object in between). `tsHi:tsLo` is the closing packet's timestamp when
 * `b.tsKind` says it has one.
 */
export function writeMessageEventJson(
  out: OutputBuffer,
  b: MessageBuffer,
  tsHi: number,
  tsLo: number,
  at: number,
): void {
  const length = b.sent;
  if (b.eventHead === null || b.eventHeadClosedBy !== b.closedBy) {
    scratch.ascii('{"kind":"message","master":');
    scratch.uint(b.master);
    scratch.ascii(',"channel":');
    scratch.uint(b.channel);
    scratch.ascii(',"closed_by":"');
    scratch.ascii(CLOSED_BY_NAMES[b.closedBy]);
    scratch.ascii('","at_nibble":');
    b.eventHead = scratch.takeBytes();
    b.eventHeadClosedBy = b.closedBy;
  }
  const head = b.eventHead;
  if (length < LENGTH_AND_DATA.length) {
    // Most messages: one reservation, then the pieces written in place.
    const piece = (LENGTH_AND_DATA[length] ??= lengthAndData(length));
    const bytes = out.reserve(head.length + MAX_DECIMAL_DIGITS + piece.length + 2 * length + 1);
    let end = putUint(bytes, putBytes(bytes, out.length, head), at);
    end = putHex(bytes, putBytes(bytes, end, piece), b.data, 0, length);
    bytes[end] = QUOTE;
    out.length = end + 1;
  } else {
    out.raw(head);
    out.uint(at);
    out.ascii(',"len":');
    out.uint(length);
    writeLongData(out, b.data, length);
    out.ascii('"');
  }
  if (b.tsKind !== 0) {
    out.ascii(',"closing_ts":"');
    writeHex64(out, b.tsKind === 1 ? tsHi : 0, tsLo, b.tsKind === 1 ? 16 : 2);
    out.ascii('"');
  }
  if (b.length > length) {
    out.ascii(',"truncated_from":');
    out.uint(b.length);
  }
  if (b.control !== null) {
    out.ascii(',"control":');
    out.text(JSON.stringify(b.control));
  }
  out.ascii('}');
}

/**
 * `,"len":N,"data":"` for the short lengths most messages have, built on first use: one copy
 * where the key and the number would be a dozen single bytes.
 */
const LENGTH_AND_DATA: Uint8Array[] = new Array(64);

function lengthAndData(length: number): Uint8Array {
  scratch.ascii(',"len":');
  scratch.uint(length);
  scratch.ascii(',"data":"');
  return scratch.takeBytes();
}

/** The data of a message event past the short lengths: inline up to 4096 bytes, else digest, head and tail. */
function writeLongData(out: OutputBuffer, data: Uint8Array, length: number): void {
  if (length <= INLINE_DATA_MAX) {
    out.ascii(',"data":"');
    out.hexBytes(data, 0, length);
    return;
  }
  const whole = data.subarray(0, length);
  out.ascii(',"data_sha256":"');
  out.ascii(sha256Hex(whole));
  out.ascii('","data_head":"');
  out.hexBytes(whole, 0, HEAD_TAIL);
  out.ascii('","data_tail":"');
  out.hexBytes(whole, length - HEAD_TAIL, length);
}

function putData(event: StpEvent, data: Uint8Array): void {
  if (data.length <= INLINE_DATA_MAX) {
    event.data = bytesToHex(data);
    return;
  }
  event.data_sha256 = sha256Hex(data);
  event.data_head = bytesToHex(data, 0, HEAD_TAIL);
  event.data_tail = bytesToHex(data, data.length - HEAD_TAIL);
}

export function exceptionEvent(code: number, master: number, channel: number, data: Uint8Array, at: number): StpEvent {
  const event: StpEvent = { kind: 'exception', code, name: EXCEPTION_NAMES[code], master, channel };
  if (code !== 0x08) event.at_nibble = at;
  event.len = data.length;
  putData(event, data);
  if (code === 0x08) event.at_nibble = at;
  return event;
}

export function markerEvent(code: number, params: Uint8Array, at: number): StpEvent {
  return { kind: 'marker', code, name: MARKER_NAMES[code], params: bytesToHex(params), at_nibble: at };
}

/**
 * A packet list cut as in the fixtures: lists longer than 400 entries keep the first and the
 * last 200, with `{pkt: '...', omitted}` between.
 */
export function cutPacketList(list: PacketEntry[]): PacketEntry[] {
  if (list.length <= 400) return list;
  return [...list.slice(0, 200), { pkt: '...', omitted: list.length - 400 }, ...list.slice(-200)];
}
