import { CLOSED_BY_NAMES, type ClosedBy, EXCEPTION_NAMES, MARKER_NAMES } from './constants.js';
import type { ControlMessage } from './control.js';
import { bytesToHex, hex64 } from './hex.js';
import type { StpPacketParser } from './packet-parser.js';
import { PKT_NAME, PKT_PAYLOAD, Pkt } from './packets.js';
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

const NIBBLE_HEX = '0123456789ABCDEF';

function nibbles(parser: StpPacketParser, start: number, count: number): string {
  let s = '';
  const end = Math.min(start + count, parser.pktNibbles.length);
  for (let i = start; i < end; i++) s += NIBBLE_HEX[parser.pktNibbles[i]];
  return s;
}

/** The packet the parser has just reported, as a fixture packet-list entry. */
export function packetEntry(parser: StpPacketParser): PacketEntry {
  return JSON.parse(packetJson(parser)) as PacketEntry;
}

/**
 * `packetEntry` as its JSON text, built directly (the `--format packets` hot path: one line per
 * packet, no object in between). Keys in the fixtures' order: v2 `nib, pkt, val, ts_field, ts,
 * len`; v1 and pseudo-packets `nib, len, pkt, …`.
 */
export function packetJson(parser: StpPacketParser): string {
  const kind = parser.pktKind;
  const nib = parser.pktStart;
  const len = parser.pktLen;
  const pkt = PKT_NAME[kind];
  switch (kind) {
    case Pkt.ASYNC:
    case Pkt.NULL_SYNC:
    case Pkt.DISCARDED:
    case Pkt.TRUNCATED:
      return `{"nib":${nib},"len":${len},"pkt":"${pkt}"}`;
    case Pkt.ILLEGAL:
      return `{"nib":${nib},"len":${len},"pkt":"${pkt}","nibbles":"${nibbles(parser, 0, len)}"}`;
  }
  const payload = PKT_PAYLOAD[kind];
  const val =
    payload === 0
      ? ''
      : payload < 0
        ? `,"val":"${nibbles(parser, parser.payloadStart, parser.payloadLen)}"`
        : `,"val":"0x${nibbles(parser, parser.payloadStart, parser.payloadLen)}"`;
  let ts = '';
  if (parser.tsLen > 0) {
    ts = parser.tsFixed ? hex64(0, parser.tsLo, 2) : hex64(parser.tsHi, parser.tsLo, 16);
  }
  if (parser.version === 1) {
    return `{"nib":${nib},"len":${len},"pkt":"${pkt}"${val}${ts === '' ? '' : `,"ts":"${ts}"`}}`;
  }
  const tsFields = ts === '' ? '' : `,"ts_field":"${nibbles(parser, parser.tsStart, parser.tsLen)}","ts":"${ts}"`;
  return `{"nib":${nib},"pkt":"${pkt}"${val}${tsFields},"len":${len}}`;
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

/**
 * A message event (spec §13) as its JSON text, built directly: the `--format events` hot path
 * (one line per message, no object in between). `data[0, length)` is the message.
 */
export function messageEventJson(
  master: number,
  channel: number,
  data: Uint8Array,
  length: number,
  closedBy: ClosedBy,
  closingTs: string | null,
  truncatedFrom: number,
  control: ControlMessage | null,
  at: number,
): string {
  let line = `{"kind":"message","master":${master},"channel":${channel},"closed_by":"${CLOSED_BY_NAMES[closedBy]}","at_nibble":${at},"len":${length},`;
  if (length <= INLINE_DATA_MAX) line += `"data":"${bytesToHex(data, 0, length)}"`;
  else {
    const whole = data.subarray(0, length);
    line += `"data_sha256":"${sha256Hex(whole)}","data_head":"${bytesToHex(whole, 0, HEAD_TAIL)}","data_tail":"${bytesToHex(whole, length - HEAD_TAIL)}"`;
  }
  if (closingTs !== null) line += `,"closing_ts":"${closingTs}"`;
  if (truncatedFrom >= 0) line += `,"truncated_from":${truncatedFrom}`;
  if (control !== null) line += `,"control":${JSON.stringify(control)}`;
  return `${line}}`;
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
