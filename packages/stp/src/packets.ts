import { ClosedBy } from './constants.js';

/**
 * Every STP v1 and v2 packet the parser knows (spec §2, §3), plus the pseudo-packets of the
 * fixtures' packet lists. One numeric id each; the tables below are indexed by it.
 */
export enum Pkt {
  NULL = 0,
  // STP v1
  MASTER,
  OVRF,
  V1_C8,
  V1_D8,
  V1_D16,
  V1_D32,
  V1_D64,
  V1_D8TS,
  V1_D16TS,
  V1_D32TS,
  V1_D64TS,
  // STP v2
  M8,
  MERR,
  C8,
  D8,
  D16,
  D32,
  D64,
  D8MTS,
  D16MTS,
  D32MTS,
  D64MTS,
  D4,
  D4MTS,
  FLAG_TS,
  M16,
  GERR,
  C16,
  D8TS,
  D16TS,
  D32TS,
  D64TS,
  D8M,
  D16M,
  D32M,
  D64M,
  D4TS,
  D4M,
  FLAG,
  VERSION,
  NULL_TS,
  USER,
  USER_TS,
  TRIG,
  TRIG_TS,
  FREQ,
  FREQ_TS,
  XSYNC,
  XSYNC_TS,
  // pseudo-packets of the packet list
  ASYNC,
  NULL_SYNC,
  ILLEGAL,
  DISCARDED,
  TRUNCATED,
  // Added after the others so that packet ids in older snapshots keep their meaning.
  TIME,
  TIME_TS,
}

/** What a packet does once complete. */
export enum Action {
  NONE = 0,
  DATA,
  FLAG,
  /** MASTER (v1), M8, M16: a new current master, channel 0. */
  MASTER,
  /** C8 (v1, v2), C16: a new current channel. */
  CHANNEL,
  /** OVRF (v1), MERR, GERR: buffers closed as `closes` says (spec §8). */
  ERROR,
  VERSION,
  FREQ,
}

/** A packet's place in the stream: which STP version has it (0: both), and its opcode nibbles. */
type Opcode = { version: 0 | 1 | 2; nibbles: string };

interface PacketSpec {
  name: string;
  /** Opcode nibbles in stream order ('' for the pseudo-packets). */
  opcode: Opcode;
  /** Payload nibbles after the opcode, timestamp excluded (-1: USER's length form, -2: TIME's). */
  payload: number;
  ts: boolean;
  action: Action;
  /** Data bytes a Dnn packet appends (D4: 1, as byte 0x0N). */
  bytes: number;
  /** How a message closes (DATA, FLAG), or which error it is (ERROR). */
  closes: ClosedBy;
  /** MASTER, CHANNEL: bits of the current value an 8-bit form keeps (v2 M8 and C8). */
  keep: number;
}

const v1 = (nibbles: string): Opcode => ({ version: 1, nibbles });
const v2 = (nibbles: string): Opcode => ({ version: 2, nibbles });
const NO_OPCODE: Opcode = { version: 0, nibbles: '' };

const p = (
  name: string,
  opcode: Opcode,
  payload: number,
  ts: boolean,
  action: Action,
  more: { bytes?: number; closes?: ClosedBy; keep?: number } = {},
): PacketSpec => ({ name, opcode, payload, ts, action, bytes: 0, closes: ClosedBy.NONE, keep: 0, ...more });

/**
 * The four sizes of one data packet form, D8, D16, D32, D64 (1, 2, 4, 8 bytes), whose opcodes
 * are `first` and the three nibbles after it.
 */
const dataSizes = (suffix: string, first: Opcode, ts: boolean, closes: ClosedBy) =>
  [1, 2, 4, 8].map((bytes, i) => {
    const last = Number.parseInt(first.nibbles.at(-1) ?? '0', 16) + i;
    const opcode = { version: first.version, nibbles: first.nibbles.slice(0, -1) + last.toString(16).toUpperCase() };
    return p(`D${bytes * 8}${suffix}`, opcode, bytes * 2, ts, Action.DATA, { bytes, closes });
  });

const NOT_CLOSING = ClosedBy.NONE;

/** Indexed by `Pkt`: the order of the enum above. */
const SPECS: PacketSpec[] = [
  p('NULL', { version: 0, nibbles: '0' }, 0, false, Action.NONE),
  // STP v1
  p('MASTER', v1('1'), 2, false, Action.MASTER),
  p('OVRF', v1('2'), 2, false, Action.ERROR, { closes: ClosedBy.OVRF }),
  p('C8', v1('3'), 2, false, Action.CHANNEL),
  ...dataSizes('', v1('4'), false, NOT_CLOSING),
  ...dataSizes('TS', v1('8'), true, ClosedBy.TS),
  // STP v2
  p('M8', v2('1'), 2, false, Action.MASTER, { keep: 0xff00 }),
  p('MERR', v2('2'), 2, false, Action.ERROR, { closes: ClosedBy.MERR }),
  p('C8', v2('3'), 2, false, Action.CHANNEL, { keep: 0xff00 }),
  ...dataSizes('', v2('4'), false, NOT_CLOSING),
  ...dataSizes('MTS', v2('8'), true, ClosedBy.MTS),
  p('D4', v2('C'), 1, false, Action.DATA, { bytes: 1 }),
  p('D4MTS', v2('D'), 1, true, Action.DATA, { bytes: 1, closes: ClosedBy.MTS }),
  p('FLAG_TS', v2('E'), 0, true, Action.FLAG, { closes: ClosedBy.FLAG_TS }),
  p('M16', v2('F1'), 4, false, Action.MASTER),
  p('GERR', v2('F2'), 2, false, Action.ERROR, { closes: ClosedBy.GERR }),
  p('C16', v2('F3'), 4, false, Action.CHANNEL),
  ...dataSizes('TS', v2('F4'), true, NOT_CLOSING),
  ...dataSizes('M', v2('F8'), false, ClosedBy.M),
  p('D4TS', v2('FC'), 1, true, Action.DATA, { bytes: 1 }),
  p('D4M', v2('FD'), 1, false, Action.DATA, { bytes: 1, closes: ClosedBy.M }),
  p('FLAG', v2('FE'), 0, false, Action.FLAG, { closes: ClosedBy.FLAG }),
  p('VERSION', v2('F00'), 1, false, Action.VERSION),
  p('NULL_TS', v2('F01'), 0, true, Action.NONE),
  p('USER', v2('F02'), -1, false, Action.NONE),
  p('USER_TS', v2('F03'), -1, true, Action.NONE),
  p('TRIG', v2('F06'), 2, false, Action.NONE),
  p('TRIG_TS', v2('F07'), 2, true, Action.NONE),
  p('FREQ', v2('F08'), 8, false, Action.FREQ),
  p('FREQ_TS', v2('F09'), 8, true, Action.FREQ),
  p('XSYNC', v2('F0A'), 2, false, Action.NONE),
  p('XSYNC_TS', v2('F0B'), 2, true, Action.NONE),
  // pseudo-packets of the packet list
  p('ASYNC', NO_OPCODE, 0, false, Action.NONE),
  p('NULL_SYNC', NO_OPCODE, 0, false, Action.NONE),
  p('ILLEGAL', NO_OPCODE, 0, false, Action.NONE),
  p('DISCARDED', NO_OPCODE, 0, false, Action.NONE),
  p('TRUNCATED', NO_OPCODE, 0, false, Action.NONE),
  p('TIME', v2('F04'), -2, false, Action.NONE),
  p('TIME_TS', v2('F05'), -2, true, Action.NONE),
];

export const PKT_NAME: readonly string[] = SPECS.map((s) => s.name);
/** Opcode nibbles in stream order, as hex digits ("F00" for VERSION). */
export const PKT_OPCODE: readonly string[] = SPECS.map((s) => s.opcode.nibbles);
export const PKT_PAYLOAD = Int8Array.from(SPECS.map((s) => s.payload));
export const PKT_TS = Uint8Array.from(SPECS.map((s) => (s.ts ? 1 : 0)));
export const PKT_BYTES = Uint8Array.from(SPECS.map((s) => s.bytes));
export const PKT_CLOSES = Uint8Array.from(SPECS.map((s) => s.closes));
export const PKT_ACTION = Uint8Array.from(SPECS.map((s) => s.action));
export const PKT_KEEP = Uint16Array.from(SPECS.map((s) => s.keep));

/** The packet of STP `version` named `name` (v1 and v2 both have a C8 and a D8). */
export function packetOf(version: 1 | 2, name: string): Pkt {
  const kind = SPECS.findIndex((s) => s.name === name && (s.opcode.version === version || s.opcode.version === 0));
  if (kind < 0) throw new RangeError(`no STP v${version} packet ${name}`);
  return kind;
}

/**
 * Packet by the last nibble of its opcode, for the opcodes of STP `version` that start with
 * `prefix`; -1 where none does (a longer opcode's prefix, or a reserved one).
 */
function opcodeTable(version: 1 | 2, prefix: string): Int8Array {
  const table = new Int8Array(16).fill(-1);
  SPECS.forEach((s, kind) => {
    const { nibbles } = s.opcode;
    if (s.opcode.version !== version && s.opcode.version !== 0) return;
    if (nibbles.length !== prefix.length + 1 || !nibbles.startsWith(prefix)) return;
    table[Number.parseInt(nibbles.at(-1) ?? '', 16)] = kind;
  });
  return table;
}

/** STP v1: packet by opcode nibble; -1 for the opcodes C to F, illegal for Fido. */
export const V1_OPCODES = opcodeTable(1, '');
/** STP v2 one-nibble opcodes 0..E (F leads to the longer opcodes). */
export const V2_OPCODES_1 = opcodeTable(2, '');
/** STP v2 opcodes F,1..F,E (F,0 leads to the 3-nibble opcodes, F,F to ASYNC). */
export const V2_OPCODES_2 = opcodeTable(2, 'F');
/** STP v2 opcodes F,0,0..F,0,B; F,0,C..F,0,F are reserved and illegal for Fido. */
export const V2_OPCODES_3 = opcodeTable(2, 'F0');
