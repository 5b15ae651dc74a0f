import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import type { Bus, ControlAsk } from '@tracehub/bus';
import type { ControlReply, ControlRequest, TraceRecord } from '@tracehub/contracts';
import { type Database, latestSession } from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import { buildCommand, CommandFieldError, QsTargetLink } from '@tracehub/qspy-frontend';
import type { Kysely } from 'kysely';
import { askGateway, gatewayErrors } from '../ask-gateway.js';
import { problemResponses, TraceRecordRef } from '../schemas.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface ControlRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  /** The api's one live record feed: a reply window collects the link's records from it. */
  feed: RecordFeed;
  timeoutMs: number;
}

const u8 = Type.Integer({ minimum: 0, maximum: 255 });
const u16 = Type.Integer({ minimum: 0, maximum: 0xffff });
/** Values up to 64 bits: a JSON number loses precision past 2^53, so they may come as text. */
const numberText = (max: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^(0x[0-9A-Fa-f]{1,16}|[0-9]{1,20})$' })], {
    description: `an integer, or its decimal or 0x-hex text; at most ${max}`,
  });
const u32 = numberText('0xFFFFFFFF');
const name = Type.String({ minLength: 1, maxLength: 63, pattern: '^[^\\x00]+$' });
/** An object, function, signal or command: its dictionary name, or its number. */
const named = (what: string, max: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ minLength: 1, maxLength: 63, pattern: '^[^\\x00]+$' })], {
    description: `the ${what}'s name in the link's dictionaries, or its number (decimal or 0x-hex text; the target's size decides the range, at most ${max})`,
  });
const itemSize = Type.Integer({ description: 'item size in bytes: 1, 2 or 4' });
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
const COMMANDS: Record<string, { description: string; props: Record<string, TSchema> }> = {
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

const commandSchemas = new Map(
  Object.entries(COMMANDS).map(([c, { description, props }]) => [
    c,
    Type.Object({ command: Type.Literal(c), ...props }, { additionalProperties: false, description }),
  ]),
);

/** A QS-RX command: `command` names it; see the descriptions of each in COMMANDS. */
export const ControlCommand = Type.Object(
  // One enum rather than a union of literals: a wrong name gets one error, not one per command.
  { command: Type.Unsafe<string>({ type: 'string', enum: Object.keys(COMMANDS) }) },
  {
    additionalProperties: true,
    description: `one of: ${Object.entries(COMMANDS)
      .map(([c, d]) => `${c} (${d.description})`)
      .join('; ')}`,
  },
);
export type ControlCommand = Static<typeof ControlCommand> & Record<string, unknown>;

const Body = Type.Object(
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

const AnswerRecord = Type.Object({
  type: Type.Integer(),
  name: Type.String(),
  text: Type.String(),
  fields: Type.Record(Type.String(), Type.Unknown()),
});

const Reply = Type.Object({
  ok: Type.Boolean({ description: 'the target took the command (a Trg-ERR or no answer is not ok)' }),
  outcome: Type.Union(
    ['ack', 'done', 'data', 'error', 'timeout', 'none'].map((o) => Type.Literal(o)),
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

const FrontEndStatus = Type.Object(
  {
    targetConnected: Type.Boolean(),
    target: Type.Record(Type.String(), Type.Unknown()),
    dictionaries: Type.Record(Type.String(), Type.Integer()),
    names: Type.Optional(
      Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'names in the dictionaries (objects, functions, signals, commands), at most 1000 of each',
      }),
    ),
    frontEnd: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    released: Type.Optional(Type.Boolean()),
  },
  { description: "the link's QS control point: its target, dictionaries and front-end port (who is attached)" },
);

/**
 * `POST /links/{id}/commands`: the link's gateway lays the command out (its QS-RX counter,
 * dictionaries and the target's sizes), writes it and waits for the target's own answer,
 * which comes back matched to the command. `GET /links/{id}/control` shows the control point;
 * `POST /links/{id}/frontend/release` frees its front-end port. All need the `control` scope.
 */
export const controlRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (
  app,
  { db, bus, feed, timeoutMs },
) => {
  // 409: the link is not a QS link.
  const controlErrors = { 409: problemResponses[400], ...gatewayErrors };

  async function qsLink(id: number) {
    const link = await mustGetLink(db, id);
    if (link.protocol !== 'qs')
      throw httpErrors.conflict(`link ${link.rig}/${link.name} is ${link.protocol}; commands are QS-RX`);
    return link;
  }

  const ask = (rig: string, linkName: string, request: ControlAsk, waitMs: number): Promise<ControlReply> =>
    askGateway(bus, { rig, link: linkName }, request, waitMs);

  app.post(
    '/links/:id/commands',
    linkRoute(
      {
        summary: 'Send a QS-RX command to the target of a link and wait for its answer',
        tags: ['control'],
        body: Body,
        response: { 200: Reply, ...controlErrors },
      },
      'control',
    ),
    async (request) => {
      const body = request.body;
      const command = checkCommand(body.command as Record<string, unknown>);
      const link = await qsLink(request.params.id);
      const session = (await latestSession(db, link.rig, link.name)) ?? null;
      const sizes = sizesOf(session?.target_info ?? null);
      // Values against the field widths and the last known target sizes, before the gateway
      // checks them again against the live target and resolves the names.
      try {
        buildCommand(command.qs, new QsTargetLink({ write: () => {} }), sizes, {
          resolveNames: false,
        });
      } catch (e) {
        if (e instanceof CommandFieldError) {
          throw httpErrors.badRequest(`body ${command.fieldName(e.field)}: ${e.message.slice(e.field.length + 2)}`);
        }
        throw e;
      }
      const answerTimeoutMs = body.answerTimeoutMs ?? 1000;
      const windowMs = body.replyWindowMs ?? 0;
      const collected: TraceRecord[] = [];
      const stopCollecting =
        windowMs > 0
          ? feed.add((batch) => {
              if (batch.protocol === 'qs' && batch.rig === link.rig && batch.link === link.name)
                collected.push(...batch.records);
            })
          : undefined;
      // The feed may have just opened its subscription: records from now on reach it.
      if (stopCollecting) await feed.flush();
      try {
        const reply = await ask(
          link.rig,
          link.name,
          { qs: command.qs, answerTimeoutMs, sizes },
          timeoutMs + answerTimeoutMs,
        );
        if (!reply.result) {
          if (reply.field)
            throw httpErrors.badRequest(
              `body ${command.fieldName(reply.field)}: ${reply.error?.slice(reply.field.length + 2)}`,
            );
          throw httpErrors.badGateway(`the gateway could not write to the target: ${reply.error ?? 'unknown error'}`);
        }
        if (windowMs > 0) await new Promise((r) => setTimeout(r, windowMs));
        const r = reply.result as Record<string, unknown>;
        return {
          ok: reply.ok,
          outcome: r.outcome as Static<typeof Reply>['outcome'],
          answer: (r.answer ?? null) as Static<typeof AnswerRecord> | null,
          ...(reply.error ? { error: reply.error } : {}),
          written: reply.written,
          session: reply.session ?? null,
          frame: String(r.frame),
          rxSeq: Number(r.rxSeq),
          resolved: (r.resolved ?? {}) as Record<string, string>,
          output: (r.records ?? []) as Static<typeof AnswerRecord>[],
          text: (r.text ?? []) as string[],
          records: collected,
        };
      } finally {
        stopCollecting?.();
      }
    },
  );

  /** The control state (`status`), or frees the front-end port first (`releaseFrontEnd`). */
  const controlState =
    (request: { status: true } | { releaseFrontEnd: true }) => async (req: { params: { id: number } }) => {
      const link = await qsLink(req.params.id);
      const reply = await ask(link.rig, link.name, request, timeoutMs);
      if (!reply.status)
        throw httpErrors.badGateway(`the gateway has no control state: ${reply.error ?? 'unknown error'}`);
      return reply.status as Static<typeof FrontEndStatus>;
    };
  const stateRoute = (summary: string) =>
    linkRoute({ summary, tags: ['control'], response: { 200: FrontEndStatus, ...controlErrors } }, 'control');
  app.get(
    '/links/:id/control',
    stateRoute("A link's QS control point: target, dictionaries, and its front-end port (who is attached)"),
    controlState({ status: true }),
  );
  app.post(
    '/links/:id/frontend/release',
    stateRoute('Free the front-end port of a link from the front-end holding it (it gets DETACH)'),
    controlState({ releaseFrontEnd: true }),
  );
};

/**
 * Checks a command against its own schema and reports the first problem only (a union of
 * every command's schema made one bad field into hundreds of characters of errors).
 */
function checkCommand(command: Record<string, unknown>): {
  qs: NonNullable<ControlRequest['qs']>;
  fieldName(field: string): string;
} {
  const schema = commandSchemas.get(String(command.command));
  if (!schema) throw httpErrors.badRequest(`body command.command: one of ${Object.keys(COMMANDS).join(', ')}`);
  const first = Value.Errors(schema, command).First();
  if (first) {
    const path = first.path.slice(1).replaceAll('/', '.');
    const where = path ? `command.${path.replace(/\.(\d+)(?=\.|$)/g, '[$1]')}` : 'command';
    throw httpErrors.badRequest(`body ${where}: ${first.message}`);
  }
  const qs: Record<string, unknown> = { ...command };
  // `address` (a number) is the older spelling of `object` for currentObject.
  const usesAddress = command.command === 'currentObject' && command.address !== undefined;
  if (command.command === 'currentObject') {
    if ((command.object === undefined) === (command.address === undefined)) {
      throw httpErrors.badRequest('body command.object: give the object (its name or address), or address');
    }
    if (usesAddress) {
      qs.object = command.address;
      delete qs.address;
    }
  }
  return {
    qs: qs as NonNullable<ControlRequest['qs']>,
    fieldName: (field) => (usesAddress ? field.replace('command.object', 'command.address') : field),
  };
}

/** Pointer and signal sizes from the target info of the link's session (QS defaults otherwise). */
function sizesOf(info: Record<string, unknown> | null): ControlRequest['sizes'] {
  const sizes: NonNullable<ControlRequest['sizes']> = {};
  if (!info) return sizes;
  if (typeof info.objPtrSize === 'number') sizes.objPtrSize = info.objPtrSize;
  if (typeof info.funPtrSize === 'number') sizes.funPtrSize = info.funPtrSize;
  if (typeof info.sigSize === 'number') sizes.sigSize = info.sigSize;
  return sizes;
}
