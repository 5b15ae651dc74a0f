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
  V1_MASTER,
  V1_CHANNEL,
  OVRF,
  M8,
  M16,
  C8,
  C16,
  DATA,
  FLAG,
  MERR,
  GERR,
  VERSION,
  FREQ,
}

interface PacketSpec {
  name: string;
  /** Payload nibbles after the opcode, timestamp excluded (-1: USER's length form, -2: TIME's). */
  payload: number;
  ts: boolean;
  /** Data bytes a Dnn packet appends (D4: 1, as byte 0x0N). */
  bytes: number;
  closes: ClosedBy;
  action: Action;
}

const p = (name: string, payload: number, ts: boolean, action: Action, bytes = 0, closes = ClosedBy.NONE) => ({
  name,
  payload,
  ts,
  bytes,
  closes,
  action,
});

/** The four sizes of one data packet form, in opcode order: D8, D16, D32, D64 (1, 2, 4, 8 bytes). */
const dataSizes = (suffix: string, ts: boolean, closes: ClosedBy) =>
  [1, 2, 4, 8].map((bytes) => p(`D${bytes * 8}${suffix}`, bytes * 2, ts, Action.DATA, bytes, closes));

/** Indexed by `Pkt`: the order of the enum above. */
const SPECS: PacketSpec[] = [
  p('NULL', 0, false, Action.NONE),
  // STP v1
  p('MASTER', 2, false, Action.V1_MASTER),
  p('OVRF', 2, false, Action.OVRF),
  p('C8', 2, false, Action.V1_CHANNEL),
  ...dataSizes('', false, ClosedBy.NONE),
  ...dataSizes('TS', true, ClosedBy.TS),
  // STP v2
  p('M8', 2, false, Action.M8),
  p('MERR', 2, false, Action.MERR),
  p('C8', 2, false, Action.C8),
  ...dataSizes('', false, ClosedBy.NONE),
  ...dataSizes('MTS', true, ClosedBy.MTS),
  p('D4', 1, false, Action.DATA, 1),
  p('D4MTS', 1, true, Action.DATA, 1, ClosedBy.MTS),
  p('FLAG_TS', 0, true, Action.FLAG, 0, ClosedBy.FLAG_TS),
  p('M16', 4, false, Action.M16),
  p('GERR', 2, false, Action.GERR),
  p('C16', 4, false, Action.C16),
  ...dataSizes('TS', true, ClosedBy.NONE),
  ...dataSizes('M', false, ClosedBy.M),
  p('D4TS', 1, true, Action.DATA, 1),
  p('D4M', 1, false, Action.DATA, 1, ClosedBy.M),
  p('FLAG', 0, false, Action.FLAG, 0, ClosedBy.FLAG),
  p('VERSION', 1, false, Action.VERSION),
  p('NULL_TS', 0, true, Action.NONE),
  p('USER', -1, false, Action.NONE),
  p('USER_TS', -1, true, Action.NONE),
  p('TRIG', 2, false, Action.NONE),
  p('TRIG_TS', 2, true, Action.NONE),
  p('FREQ', 8, false, Action.FREQ),
  p('FREQ_TS', 8, true, Action.FREQ),
  p('XSYNC', 2, false, Action.NONE),
  p('XSYNC_TS', 2, true, Action.NONE),
  // pseudo-packets of the packet list
  p('ASYNC', 0, false, Action.NONE),
  p('NULL_SYNC', 0, false, Action.NONE),
  p('ILLEGAL', 0, false, Action.NONE),
  p('DISCARDED', 0, false, Action.NONE),
  p('TRUNCATED', 0, false, Action.NONE),
  p('TIME', -2, false, Action.NONE),
  p('TIME_TS', -2, true, Action.NONE),
];

export const PKT_NAME: readonly string[] = SPECS.map((s) => s.name);
export const PKT_PAYLOAD = Int8Array.from(SPECS.map((s) => s.payload));
export const PKT_TS = Uint8Array.from(SPECS.map((s) => (s.ts ? 1 : 0)));
export const PKT_BYTES = Uint8Array.from(SPECS.map((s) => s.bytes));
export const PKT_CLOSES = Uint8Array.from(SPECS.map((s) => s.closes));
export const PKT_ACTION = Uint8Array.from(SPECS.map((s) => s.action));

/** STP v1: packet by opcode nibble; -1 for the opcodes C to F, illegal for Fido. */
export const V1_OPCODES = Int8Array.from([
  Pkt.NULL,
  Pkt.MASTER,
  Pkt.OVRF,
  Pkt.V1_C8,
  Pkt.V1_D8,
  Pkt.V1_D16,
  Pkt.V1_D32,
  Pkt.V1_D64,
  Pkt.V1_D8TS,
  Pkt.V1_D16TS,
  Pkt.V1_D32TS,
  Pkt.V1_D64TS,
  -1,
  -1,
  -1,
  -1,
]);

/** STP v2 one-nibble opcodes 0..E (F leads to the longer opcodes). */
export const V2_OPCODES_1 = Int8Array.from([
  Pkt.NULL,
  Pkt.M8,
  Pkt.MERR,
  Pkt.C8,
  Pkt.D8,
  Pkt.D16,
  Pkt.D32,
  Pkt.D64,
  Pkt.D8MTS,
  Pkt.D16MTS,
  Pkt.D32MTS,
  Pkt.D64MTS,
  Pkt.D4,
  Pkt.D4MTS,
  Pkt.FLAG_TS,
  -1,
]);

/** STP v2 opcodes F,1..F,E (F,0 leads to the 3-nibble opcodes, F,F to ASYNC). */
export const V2_OPCODES_2 = Int8Array.from([
  -1,
  Pkt.M16,
  Pkt.GERR,
  Pkt.C16,
  Pkt.D8TS,
  Pkt.D16TS,
  Pkt.D32TS,
  Pkt.D64TS,
  Pkt.D8M,
  Pkt.D16M,
  Pkt.D32M,
  Pkt.D64M,
  Pkt.D4TS,
  Pkt.D4M,
  Pkt.FLAG,
  -1,
]);

/** STP v2 opcodes F,0,0..F,0,B; F,0,C..F,0,F are reserved and illegal for Fido. */
export const V2_OPCODES_3 = Int8Array.from([
  Pkt.VERSION,
  Pkt.NULL_TS,
  Pkt.USER,
  Pkt.USER_TS,
  Pkt.TIME,
  Pkt.TIME_TS,
  Pkt.TRIG,
  Pkt.TRIG_TS,
  Pkt.FREQ,
  Pkt.FREQ_TS,
  Pkt.XSYNC,
  Pkt.XSYNC_TS,
  -1,
  -1,
  -1,
  -1,
]);
