import { type Static, Type } from '@sinclair/typebox';
import { NAME_PATTERN, PROTOCOLS, RECORD_KINDS } from '@tracehub/contracts';

/*
 * The PalmTrace bridge's part of the contract: a Reporter endpoint as `POST /reporters` and
 * `PALMTRACE_REPORTERS` take it, and the status the `/reporters` routes answer with.
 */

const u16 = Type.Integer({ minimum: 0, maximum: 0xffff });
const u32 = Type.Integer({ minimum: 0, maximum: 0xffffffff });
const nameList = (description: string) =>
  Type.Array(Type.String({ pattern: NAME_PATTERN }), { maxItems: 200, description });

/** Which live records an endpoint gets; every list is optional and they combine with AND. */
export const ReporterFilterSchema = Type.Object(
  {
    rigs: Type.Optional(nameList('rig names (any of)')),
    links: Type.Optional(nameList('link names (any of)')),
    protocols: Type.Optional(Type.Array(Type.Union(PROTOCOLS.map((p) => Type.Literal(p))), { maxItems: 3 })),
    names: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
        maxItems: 500,
        description: 'record names (QS_QEP_TRAN, PHILO_STAT, STP_MESSAGE, ...)',
      }),
    ),
    kinds: Type.Optional(Type.Array(Type.Union(RECORD_KINDS.map((k) => Type.Literal(k))), { maxItems: 5 })),
  },
  { additionalProperties: false },
);
export type ReporterFilter = Static<typeof ReporterFilterSchema>;

/**
 * Record → Palm module id (error class). The first table that names the record wins:
 * `names` (record name), then `qsGroups` (QS record group: SM, AO, EQ, MP, TE, QF, SC, SEM,
 * MTX, TEST, USER, INFO, DICT, ERROR) or `stpMasters` (STP/SWD master number, decimal), then
 * `default` (`appErrorClass` 0x8000).
 */
export const ModuleTableSchema = Type.Object(
  {
    default: Type.Optional(u16),
    names: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 100 }), u16)),
    qsGroups: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Z]{2,5}$' }), u16)),
    stpMasters: Type.Optional(Type.Record(Type.String({ pattern: '^[0-9]{1,5}$' }), u16)),
  },
  { additionalProperties: false },
);
export type ModuleTable = Static<typeof ModuleTableSchema>;

const ticksPerMs = Type.Number({ exclusiveMinimum: 0, maximum: 1e12 });

/** How records become messages: shared by outgoing endpoints and the listening port. */
export const ReporterOptionsProperties = {
  filter: Type.Optional(ReporterFilterSchema),
  modules: Type.Optional(ModuleTableSchema),
  encoding: Type.Optional(
    Type.Union([Type.Literal('windows-1252'), Type.Literal('latin1'), Type.Literal('utf-8')], {
      description: 'text encoding on the wire (default windows-1252; unmappable characters become ?)',
    }),
  ),
  binaryStp: Type.Optional(
    Type.Boolean({ description: 'send STP/SWD message payloads as binary (kind 2) instead of their text line' }),
  ),
  rigNumbers: Type.Optional(
    Type.Record(Type.String({ pattern: NAME_PATTERN }), u32, {
      description: 'Process ID of a rig; rigs not named here use the digits their name ends with',
    }),
  ),
  targetTicksPerMs: Type.Optional(
    Type.Object(
      { qs: Type.Optional(ticksPerMs), stp: Type.Optional(ticksPerMs), swd: Type.Optional(ticksPerMs) },
      {
        additionalProperties: false,
        description:
          "target clock ticks per millisecond, per protocol; a protocol left out takes its link's `tickRate` setting / 1000, else the default (QS 10 000, STP 19 200, SWD 1)",
      },
    ),
  ),
};
export const ReporterOptionsSchema = Type.Object(ReporterOptionsProperties, { additionalProperties: false });
export type ReporterOptions = Static<typeof ReporterOptionsSchema>;

/** A stored session or a host-time range, sent instead of the live stream. */
export const ReplaySchema = Type.Object(
  {
    session: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^[^\\u0000]+$' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'host time range start (inclusive)' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'host time range end (exclusive)' })),
    pace: Type.Optional(
      Type.Union([Type.Literal('original'), Type.Literal('fast')], {
        description: 'original: spaced by the records’ host times; fast: as fast as the Reporter reads (default)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ReplayRequest = Static<typeof ReplaySchema>;

/** One Reporter to connect to (the body of POST /reporters, an entry of PALMTRACE_REPORTERS). */
export const ReporterEndpointSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: NAME_PATTERN, description: 'name of the endpoint (default r1, r2, …)' })),
    host: Type.String({
      minLength: 1,
      maxLength: 253,
      // A NUL or a control character in a host name is refused by the resolver, not looked up.
      pattern: '^[^\\u0000-\\u0020\\u007f]+$',
      description: 'host of the listening Reporter (a name or address: no spaces or control characters)',
    }),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    ...ReporterOptionsProperties,
    queueRecords: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'records queued before the oldest are dropped' }),
    ),
    replay: Type.Optional(ReplaySchema),
  },
  { additionalProperties: false },
);
export type ReporterEndpointInput = Static<typeof ReporterEndpointSchema>;

/** An endpoint of `GET /reporters` (and of the other `/reporters` routes): its settings and how it is doing. */
export const ReporterStatusSchema = Type.Object({
  id: Type.String(),
  source: Type.Union([Type.Literal('config'), Type.Literal('api')]),
  host: Type.String(),
  port: Type.Integer(),
  mode: Type.Union([Type.Literal('live'), Type.Literal('replay')]),
  connected: Type.Boolean(),
  messagesSent: Type.Integer({ description: 'messages handed to the connection (lines and dropped notices)' }),
  bytesSent: Type.Integer(),
  dropped: Type.Integer({ description: 'records dropped because the Reporter was slower than the stream' }),
  reconnects: Type.Integer({ description: 'connections made again after a loss' }),
  queued: Type.Integer({ description: 'records waiting to be sent' }),
  bytesIgnored: Type.Integer({ description: 'bytes the Reporter sent back (ignored: the protocol is one way)' }),
  lastError: Type.Union([Type.String(), Type.Null()]),
  servedBy: Type.Union([Type.String(), Type.Null()], {
    description: 'the API process serving the endpoint (null: none now; another takes it within a lease)',
  }),
  statusAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'when the serving process wrote this status (it does every fifth of PALMTRACE_LEASE_MS)',
  }),
  replay: Type.Union([
    Type.Object({
      state: Type.Union(['waiting', 'running', 'done', 'failed'].map((s) => Type.Literal(s))),
      records: Type.Integer({ description: 'stored records queued for sending so far' }),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
  config: ReporterEndpointSchema,
});

/** The listening port of `GET /reporters` and its clients; null when it is off. */
export const ListenerStatusSchema = Type.Union([
  Type.Object({
    host: Type.String(),
    port: Type.Integer(),
    clients: Type.Array(
      Type.Object({
        remoteAddress: Type.String(),
        remotePort: Type.Integer(),
        connectedAt: Type.String(),
        messagesSent: Type.Integer(),
        bytesSent: Type.Integer(),
        dropped: Type.Integer(),
        queued: Type.Integer(),
      }),
    ),
  }),
  Type.Null(),
]);
export type ReporterStatus = Static<typeof ReporterStatusSchema>;
export type ListenerStatus = Static<typeof ListenerStatusSchema>;

/** `GET /reporters`. */
export const ReportersReply = Type.Object({
  reporters: Type.Array(ReporterStatusSchema),
  listener: ListenerStatusSchema,
});
export type ReportersReply = Static<typeof ReportersReply>;
