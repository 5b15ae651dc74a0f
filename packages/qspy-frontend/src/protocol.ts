import { QS_STATE_RECORD_IDS } from '@tracehub/qs';

/** Packet ids a front-end sends to qspy above the raw QS-RX range (front-end spec 3.1). */
export const FePacket = {
  ATTACH: 128,
  DETACH: 129,
  SAVE_DICT: 130,
  TEXT_OUT: 131,
  BIN_OUT: 132,
  MATLAB_OUT: 133,
  SEQUENCE_OUT: 134,
  SEND_EVENT: 135,
  SEND_AO_FILTER: 136,
  SEND_CURR_OBJ: 137,
  SEND_COMMAND: 138,
  SEND_TEST_PROBE: 139,
  CLEAR_SCREEN: 140,
  SHOW_NOTE: 141,
} as const;

/** The command names qspy puts in its "command '...' incorrect" line. */
export const FE_PACKET_NAMES: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(FePacket).map(([name, id]) => [id, name])),
);

/** Channel bits of an ATTACH (front-end spec 5.2). */
export const Channel = { BINARY: 0x01, TEXT: 0x02 } as const;

/** Records whose lines qspy never sends on the text channel (front-end spec 6.3). */
export const SILENT_TEXT_RECORDS: ReadonlySet<number> = new Set(QS_STATE_RECORD_IDS);

/** Target version from which SEND_COMMAND names come from the QS_CMD enumeration (7.1.4). */
export const CMD_ENUM_FROM_VERSION = 714;
/** qspy caps a rendered line at this many characters. */
export const MAX_TEXT_CHARS = 992;

/** The error and warning lines of front-end spec 13.1, exactly as qspy prints them. */
export const Lines = {
  discontinuity: (expected: number, got: number) => `   <F-END> ERROR    Data Discontinuity Seq=${expected}->${got}`,
  socketInUse: '   <F-END> WARN     UDP socket in use',
  unrecognized: (id: number) => `   <F-END> ERROR    Unrecognized command Rec=${id}`,
  incorrect: (command: string) => `   <F-END> ERROR    command '${command}' incorrect`,
  noObject: (name: string) => `   <F-END> ERROR    Object Dictionary not found for Name=${name}`,
  badObjectKind: (kind: number) => `   <F-END> ERROR    Incorrect Object Kind=${kind}`,
  noCommand: (name: string) => `   <F-END> ERROR    Command Dictionary not found for Name=${name}`,
  noFunction: (name: string) => `   <F-END> ERROR    Function Dictionary not found for Name=${name}`,
  sendFailed: (id: number, length: number) => `   <COMMS> ERROR    Sending Data to the Target Rec=${id},Len=${length}`,
  noDictionaryFile: '   <QSPY-> Dictionaries NOT configured (no -d option)',
  noSequenceList: '   <QSPY-> Sequence list NOT provided (no -g option) ',
  // Not in qspy 7.4.0, whose encode buffer overflows instead (spec 13.2).
  frameTooLong: (id: number, length: number, max: number) =>
    `   <F-END> ERROR    Packet too long for the target Rec=${id},Len=${length} (at most ${max})`,
} as const;
