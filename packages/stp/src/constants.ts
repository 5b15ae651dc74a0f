/** Names and numbers of the Fido trace box output (spec §8–§11), each beside its value. */

/** OST header constants (spec §9.1, §10). */
export const OST_VERSION = 0x10;
export const OST_ENTITY_DEFAULT = 0x00;
export const OST_ENTITY_TRACEBOX = 0xf0;
export const OST_PROTOCOL_XTIV3 = 0x84;
export const OST_PROTOCOL_TRACEBOX = 0x81;
export const OST_PROTOCOL_WRAPPER = 0x99;

/** PhoNet header constants (spec §9.2, §10). */
export const PHONET_MEDIA_TCPIP = 0x1d;
export const PHONET_RECEIVER_PC = 0x10;
export const PHONET_SENDER_TRACEBOX = 0x4c;
export const PHONET_RESOURCE = 0x7c;
export const TB_TRACE_MSG = 0x94;
export const TB_TRACE_EXCEPTION_MSG = 0x95;
export const TB_WRAPPER_MSG = 0x99;
export const TB_MARKER = 0xff;
export const WRAPPER_TYPE_SWD = 0x01;

/** Tracebox port of Musti CH2 emulation, the default sender object (spec §9.1). */
export const DEFAULT_TRACEBOX_PORT = 0x0b;
/** Sender object of user and timebase markers. */
export const SENDER_MAIN = 0x01;

/** Exception codes of PhoNet TB_TRACE_EXCEPTION_MSG (spec §8). */
export enum ExceptionCode {
  LONG_MESSAGE_FIRST = 0x01,
  LONG_MESSAGE_MIDDLE = 0x02,
  LONG_MESSAGE_LAST = 0x03,
  UNFINISHED_MESSAGE = 0x04,
  OVRF_PACKET = 0x05,
  LONG_UNFINISHED_MESSAGE = 0x06,
  LONG_OVRF_PACKET = 0x07,
  OVRF = 0x08,
}

/** `TB_EXCEPTION_<name>` by exception code. */
export const EXCEPTION_NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(
    Object.entries(ExceptionCode)
      .filter(([, code]) => typeof code === 'number')
      .map(([name, code]) => [code, `TB_EXCEPTION_${name}`]),
  ),
);

/** Marker types (spec §10). */
export enum MarkerCode {
  USER = 0x02,
  TIMEBASE_CHANGED = 0x03,
  DATA_CORRUPTED = 0x06,
  PAUSE_IN_STP_STREAM_LONG = 0x23,
  OVERFLOW = 0x26,
  RESERVED_STP_PACKET = 0x27,
}

export const MARKER_NAMES: Readonly<Record<number, string>> = Object.freeze({
  2: 'TB_USER_MARKER',
  3: 'TB_TIMEBASE_CHANGED',
  6: 'TB_ERROR_DATA_CORRUPTED',
  35: 'TB_ERROR_PAUSE_IN_STP_STREAM_LONG',
  38: 'TB_ERROR_OVERFLOW',
  39: 'TB_ERROR_RESERVED_STP_PACKET',
});

/** How a message was closed (the fixtures' `closed_by`, spec §7). */
export enum ClosedBy {
  NONE = 0,
  TS = 1,
  M = 2,
  MTS = 3,
  FLAG = 4,
  FLAG_TS = 5,
  OVRF = 6,
  MERR = 7,
  GERR = 8,
  PAUSE = 9,
}

/** The fixtures' `closed_by` by `ClosedBy` value: the enum's own names, '' for NONE. */
export const CLOSED_BY_NAMES: readonly string[] = Object.freeze(
  Array.from({ length: ClosedBy.PAUSE + 1 }, (_, value) => (value === ClosedBy.NONE ? '' : ClosedBy[value])),
);

/** OST timestamp flags, bits 63:60 (spec §9.1). */
export enum TimestampFlag {
  DEVICE = 0b1100,
  FIDO = 0b1101,
  APPROXIMATED = 0b1110,
}

/** Largest output message, header included (spec §8 "Too-long messages"). */
export const MAX_OUTPUT_MESSAGE = 0xffff;
/** Data limits that follow from it. */
export const OST_MAX_DATA = 65516;
export const PHONET_MAX_DATA = 65515;
export const PHONET_EXCEPTION_MAX_DATA = 65514;
