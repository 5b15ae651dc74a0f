import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TraceRecordRef } from './common.js';

const u8 = Type.Integer({ minimum: 0, maximum: 255 });
const u16 = Type.Integer({ minimum: 0, maximum: 0xffff });
/** The largest integer a JSON number holds exactly (2^53 - 1): larger values come as text. */
const jsonInteger = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
/** Values up to 64 bits: a JSON number loses precision past 2^53, so they may come as text. */
const numberText = (max: string) =>
  Type.Union([jsonInteger, Type.String({ pattern: '^(0x[0-9A-Fa-f]{1,16}|[0-9]{1,20})$' })], {
    description: `an integer, or its decimal or 0x-hex text; at most ${max}`,
  });
const u32 = numberText('0xFFFFFFFF');
const name = Type.String({ minLength: 1, maxLength: 63, pattern: '^[^\\x00]+$' });
/** An object, function, signal or command: its dictionary name, or its number. */
const named = (what: string, max: string) =>
  Type.Union([jsonInteger, Type.String({ minLength: 1, maxLength: 63, pattern: '^[^\\x00]+$' })], {
    description: `the ${what}'s name in the link's dictionaries, or its number (decimal or 0x-hex text; the target's size decides the range, at most ${max})`,
  });
const itemSize = Type.Integer({ minimum: 1, maximum: 4, description: 'item size in bytes: 1, 2 or 4' });
const kind = Type.Union(
  [
    Type.Integer({ minimum: 0, maximum: 6 }),
    Type.Union(['SM', 'AO', 'MP', 'EQ', 'TE', 'AP', 'SM_AO'].map((k) => Type.Literal(k))),
  ],
  {
    description: 'object kind: SM, AO, MP, EQ, TE, AP, SM_AO (or 0..6)',
  },
);
const filterItems = (what: string) =>
  Type.Array(Type.Union([Type.Integer({ minimum: 0, maximum: 127 }), name]), {
    maxItems: 256,
    description: `${what} (0..127) and group names (ALL, SM, AO, ...); a leading '-' removes a group`,
  });

/** Every QS-RX command, by its `command` name: the fields each takes (the gateway checks them against the target's sizes). */
export const CONTROL_COMMANDS: Record<string, { description: string; props: Record<string, TSchema> }> = {
  info: { description: 'QS_RX_INFO: the target answers with its target info', props: {} },
  reset: { description: 'QS_RX_RESET: the target resets (a QUTest host target exits)', props: {} },
  tick: { description: 'QS_RX_TICK: one clock tick at a tick rate', props: { rate: Type.Optional(u8) } },
  command: {
    description: "QS_RX_COMMAND: the application's QS_onCommand; cmdId by QS_CMD name or number",
    props: { cmdId: named('command', '255'), p1: Type.Optional(u32), p2: Type.Optional(u32), p3: Type.Optional(u32) },
  },
  event: {
    description: 'QS_RX_EVENT: publish (prio 0), post (1..), to the current AO (253), init (254) or dispatch (255)',
    props: { prio: u8, sig: named('signal', '0xFFFFFFFF'), params: Type.Optional(Type.Array(u8, { maxItems: 1024 })) },
  },
  peek: {
    description: 'QS_RX_PEEK: read items of the current AP object',
    props: { offset: u16, size: itemSize, num: u8 },
  },
  poke: {
    description: 'QS_RX_POKE: write items into the current AP object',
    props: { offset: u16, size: itemSize, items: Type.Array(u32, { minItems: 1, maxItems: 255 }) },
  },
  fill: {
    description: 'QS_RX_FILL: fill items of the current AP object',
    props: { offset: u16, size: itemSize, num: u8, value: u32 },
  },
  globalFilter: {
    description: 'QS_RX_GLB_FILTER: enable exactly these records',
    props: { records: filterItems('record ids') },
  },
  localFilter: {
    description: 'QS_RX_LOC_FILTER: enable exactly these QS-IDs',
    props: { qsIds: filterItems('QS-IDs') },
  },
  aoFilter: {
    description: "QS_RX_AO_FILTER: enable (or with remove, disable) an active object's QS-ID",
    props: { object: named('object', '0xFFFFFFFFFFFFFFFF'), remove: Type.Optional(Type.Boolean()) },
  },
  currentObject: {
    description: 'QS_RX_CURR_OBJ: set the current object of a kind; by name, an SM/AO/SM_AO also scopes signal names',
    props: {
      kind,
      object: Type.Optional(named('object', '0xFFFFFFFFFFFFFFFF')),
      address: Type.Optional(numberText('0xFFFFFFFFFFFFFFFF')),
    },
  },
  queryCurrent: {
    description: 'QS_RX_QUERY_CURR: the current object of a kind (SM, AO, MP, EQ, TE, AP)',
    props: { kind },
  },
  testSetup: { description: 'QS_RX_TEST_SETUP', props: {} },
  testTeardown: { description: 'QS_RX_TEST_TEARDOWN', props: {} },
  testContinue: { description: 'QS_RX_TEST_CONTINUE: the target leaves its paused state', props: {} },
  testProbe: {
    description: 'QS_RX_TEST_PROBE: a probe value for a function',
    props: { function: named('function', '0xFFFFFFFFFFFFFFFF'), data: Type.Optional(u32) },
  },
};

/** Each command's own schema, by name: a body is checked against the one its `command` names. */
export const commandSchemas = new Map(
  Object.entries(CONTROL_COMMANDS).map(([c, { description, props }]) => [
    c,
    Type.Object({ command: Type.Literal(c), ...props }, { additionalProperties: false, description }),
  ]),
);

/** A QS-RX command: `command` names it; see the descriptions of each in CONTROL_COMMANDS. */
export const ControlCommand = Type.Object(
  // One enum rather than a union of literals: a wrong name gets one error, not one per command.
  { command: Type.Unsafe<string>({ type: 'string', enum: Object.keys(CONTROL_COMMANDS) }) },
  {
    additionalProperties: true,
    description: `one of: ${Object.entries(CONTROL_COMMANDS)
      .map(([c, d]) => `${c} (${d.description})`)
      .join('; ')}`,
  },
);
export type ControlCommand = Static<typeof ControlCommand> & Record<string, unknown>;

/** The body of `POST /links/{id}/commands`. */
export const CommandRequest = Type.Object(
  {
    command: ControlCommand,
    answerTimeoutMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 60_000,
        description: "how long to wait for the target's answer, ms (default 1000)",
      }),
    ),
    replyWindowMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: 'also collect the records the link publishes for this long after the answer, ms',
      }),
    ),
  },
  { additionalProperties: false },
);

export type CommandRequest = Static<typeof CommandRequest>;

/** A record of the target's, as an answer or the output of a command. */
export const AnswerRecord = Type.Object({
  type: Type.Integer(),
  name: Type.String(),
  text: Type.String(),
  fields: Type.Record(Type.String(), Type.Unknown()),
});

export type AnswerRecord = Static<typeof AnswerRecord>;

/** `POST /links/{id}/commands`: what the target answered. */
export const CommandReply = Type.Object({
  ok: Type.Boolean({ description: 'the target took the command (a Trg-ERR or no answer is not ok)' }),
  outcome: Type.Union(
    (['ack', 'done', 'data', 'error', 'timeout', 'none'] as const).map((o) => Type.Literal(o)),
    {
      description:
        'ack: Trg-Ack; done: Trg-Ack then Trg-Done; data: target info, peek or query data; error: Trg-ERR; timeout: nothing came; none: nothing is expected',
    },
  ),
  answer: Type.Union([AnswerRecord, Type.Null()], { description: 'the target record that answered' }),
  error: Type.Optional(Type.String()),
  written: Type.Integer({ description: 'bytes the gateway wrote to the link' }),
  session: Type.Union([Type.String(), Type.Null()]),
  frame: Type.String({ description: 'hex of the QS-RX frame sent' }),
  rxSeq: Type.Integer({
    description: "the frame's QS-RX sequence number (the link's counter, shared with its front-end port)",
  }),
  resolved: Type.Record(Type.String(), Type.String(), { description: "names looked up in the link's dictionaries" }),
  output: Type.Array(AnswerRecord, { description: 'what the link produced from the write to the answer' }),
  text: Type.Array(Type.String(), { description: "qspy's lines of that output" }),
  records: Type.Array(TraceRecordRef, { description: 'records the link published during the reply window' }),
});

export type CommandReply = Static<typeof CommandReply>;

/**
 * A QS link's front-end port (qspy's UDP port for QView and QUTest). Open to more fields than
 * it names: the gateway's status passes through whole.
 */
export const FrontEndPort = Type.Object(
  {
    listening: Type.String({ description: 'the address the port listens on' }),
    peer: Type.Union(
      [Type.Object({ address: Type.String(), port: Type.Integer() }, { additionalProperties: true }), Type.Null()],
      {
        description: 'the front-end that holds the port (its first datagram latched it)',
      },
    ),
    channels: Type.Integer({ description: 'channel bits of its last ATTACH (1 binary, 2 text; 0: detached)' }),
    datagramsIn: Type.Integer(),
    datagramsOut: Type.Integer(),
    refused: Type.Integer({ description: 'datagrams from other front-ends while the port was held' }),
    ignored: Type.Integer({ description: 'datagrams dropped as malformed' }),
    droppedSends: Type.Integer({ description: 'datagrams not sent: the front-end read too slowly' }),
    lastHeardMs: Type.Union([Type.Number(), Type.Null()], {
      description: "when the holder's last datagram came, ms since the epoch",
    }),
  },
  { additionalProperties: true },
);
export type FrontEndPort = Static<typeof FrontEndPort>;

/** `GET /links/{id}/control` and `POST /links/{id}/frontend/release`: the link's QS control point. */
export const ControlState = Type.Object(
  {
    targetConnected: Type.Boolean(),
    target: Type.Object(
      {
        version: Type.Optional(Type.Integer({ description: 'QP version, 740 for 7.4.0' })),
        objPtrSize: Type.Optional(Type.Integer()),
        funPtrSize: Type.Optional(Type.Integer()),
        sigSize: Type.Optional(Type.Integer()),
        fromTarget: Type.Optional(Type.Boolean({ description: 'the sizes came from target info, not defaults' })),
      },
      { additionalProperties: true },
    ),
    dictionaries: Type.Record(Type.String(), Type.Integer()),
    names: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'names in the dictionaries (objects, functions, signals, commands), at most 1000 of each',
      }),
    ),
    frontEnd: Type.Union([FrontEndPort, Type.Null()]),
    released: Type.Optional(Type.Boolean()),
  },
  { description: "the link's QS control point: its target, dictionaries and front-end port (who is attached)" },
);
export type ControlState = Static<typeof ControlState>;
