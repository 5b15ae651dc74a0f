import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import { type Bus, ControlTimeoutError, NoGatewayError, requestControl } from '@tracehub/bus';
import type { ControlReply, RecordBatch, TraceRecord } from '@tracehub/contracts';
import { type Database, getLinkById, latestSession } from '@tracehub/db';
import { QsRxEncoder, type QsRxSizes } from '@tracehub/qs';
import type { Kysely } from 'kysely';
import { HttpProblem, notFound } from '../plugins/problems.js';
import { problemResponses, TraceRecordRef } from '../schemas.js';

export interface ControlRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  timeoutMs: number;
}

const u8 = Type.Integer({ minimum: 0, maximum: 255 });
const u16 = Type.Integer({ minimum: 0, maximum: 0xffff });
const u32 = Type.Integer({ minimum: 0, maximum: 0xffffffff });
const itemSize = Type.Union([Type.Literal(1), Type.Literal(2), Type.Literal(4)], { description: 'item size in bytes' });
const address = Type.String({
  pattern: '^(0x[0-9A-Fa-f]{1,16}|[0-9]{1,20})$',
  description: 'an address, decimal or 0x-hex',
});
const filterIds = Type.Array(Type.Integer({ minimum: 0, maximum: 127 }), { maxItems: 128 });

const command = <T extends string, P extends Record<string, import('@sinclair/typebox').TSchema>>(
  name: T,
  props: P,
  description: string,
) => Type.Object({ command: Type.Literal(name), ...props }, { additionalProperties: false, description });

/** A QS-RX command (spec 10), one of these shapes; `command` says which. */
export const ControlCommand = Type.Union([
  command('reset', {}, 'QS_RX_RESET: the target resets itself'),
  command('info', {}, 'QS_RX_INFO: the target answers with its target info'),
  command('tick', { rate: Type.Optional(u8) }, 'QS_RX_TICK: one clock tick at a tick rate'),
  command(
    'command',
    { cmdId: u8, p1: Type.Optional(u32), p2: Type.Optional(u32), p3: Type.Optional(u32) },
    "QS_RX_COMMAND: the application's QS_onCommand",
  ),
  command('globalFilter', { records: filterIds }, 'QS_RX_GLB_FILTER: enable exactly these record ids'),
  command('localFilter', { qsIds: filterIds }, 'QS_RX_LOC_FILTER: enable exactly these QS-IDs'),
  command(
    'event',
    { prio: u8, sig: u16, params: Type.Optional(Type.Array(u8, { maxItems: 1024 })) },
    'QS_RX_EVENT: post (prio 1..), publish (prio 0) or dispatch (255) an event',
  ),
  command(
    'currentObject',
    { kind: Type.Integer({ minimum: 0, maximum: 6 }), address },
    'QS_RX_CURR_OBJ: set the current object of a kind (0 SM, 1 AO, 2 MP, 3 EQ, 4 TE, 5 AP, 6 SM_AO)',
  ),
  command(
    'peek',
    { offset: u16, size: itemSize, num: Type.Integer({ minimum: 1, maximum: 255 }) },
    'QS_RX_PEEK: read items of the current AP object',
  ),
  command(
    'poke',
    { offset: u16, size: itemSize, items: Type.Array(u32, { minItems: 1, maxItems: 255 }) },
    'QS_RX_POKE: write items into the current AP object',
  ),
  command(
    'fill',
    { offset: u16, size: itemSize, num: Type.Integer({ minimum: 1, maximum: 255 }), value: u32 },
    'QS_RX_FILL: fill items of the current AP object',
  ),
]);
export type ControlCommand = Static<typeof ControlCommand>;

const Body = Type.Object(
  {
    command: ControlCommand,
    replyWindowMs: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10_000,
        description: 'collect the records the link produces for this long after the write (the target answer), ms',
      }),
    ),
  },
  { additionalProperties: false },
);

const Reply = Type.Object({
  ok: Type.Boolean(),
  written: Type.Integer({ description: 'bytes the gateway wrote to the link' }),
  session: Type.Union([Type.String(), Type.Null()]),
  frame: Type.String({ description: 'hex of the QS-RX frame sent' }),
  records: Type.Array(TraceRecordRef, { description: 'records of the link seen during the reply window' }),
});

/**
 * `POST /links/{id}/commands`: builds the QS-RX frame, asks the link's gateway on
 * `ctl.<rig>.<link>` to write it, and answers with the gateway's reply plus whatever the link
 * produced during the reply window. Needs the `control` scope: poke and fill write target memory.
 */
export const controlRoutes: FastifyPluginAsyncTypebox<ControlRoutesOptions> = async (app, { db, bus, timeoutMs }) => {
  // One encoder per link session: QS-RX sequence numbers count per connection of the target.
  const encoders = new Map<string, { session: string | null; encoder: QsRxEncoder }>();

  app.post(
    '/links/:id/commands',
    {
      config: { scope: 'control' },
      schema: {
        summary: 'Send a QS-RX command to the target of a link',
        tags: ['control'],
        params: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) }),
        body: Body,
        response: {
          200: Reply,
          409: problemResponses[400],
          502: problemResponses[400],
          503: problemResponses[400],
          504: problemResponses[400],
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const link = await getLinkById(db, request.params.id);
      if (!link) throw notFound(`no link with id ${request.params.id}`);
      if (link.protocol !== 'qs')
        throw new HttpProblem(409, `link ${link.rig}/${link.name} is ${link.protocol}; commands are QS-RX`);
      const session = (await latestSession(db, link.rig, link.name)) ?? null;
      const key = `${link.rig}/${link.name}`;
      let entry = encoders.get(key);
      if (!entry || entry.session !== (session?.id ?? null)) {
        entry = { session: session?.id ?? null, encoder: new QsRxEncoder(sizesOf(session?.target_info ?? null)) };
        encoders.set(key, entry);
      }
      let frame: Uint8Array;
      try {
        frame = encodeCommand(entry.encoder, request.body.command);
      } catch (error) {
        throw new HttpProblem(400, `body command: ${(error as Error).message}`);
      }

      const windowMs = request.body.replyWindowMs ?? 0;
      const collected: TraceRecord[] = [];
      const sub =
        windowMs > 0
          ? bus.nc.subscribe(bus.names.recSubject('qs', link.rig, link.name), {
              callback: (err, msg) => {
                if (err) return;
                try {
                  const batch = msg.json<RecordBatch>();
                  if (Array.isArray(batch.records)) collected.push(...batch.records);
                } catch {}
              },
            })
          : undefined;
      try {
        let reply: ControlReply;
        try {
          reply = await requestControl(
            bus,
            { rig: link.rig, link: link.name },
            { bytes: frame, replyWindowMs: windowMs },
            timeoutMs,
          );
        } catch (error) {
          if (error instanceof NoGatewayError) throw new HttpProblem(503, error.message);
          if (error instanceof ControlTimeoutError) throw new HttpProblem(504, error.message);
          throw new HttpProblem(503, `cannot reach the link's gateway over NATS: ${(error as Error).message}`);
        }
        if (!reply.ok)
          throw new HttpProblem(502, `the gateway could not write to the target: ${reply.error ?? 'unknown error'}`);
        if (windowMs > 0) await new Promise((r) => setTimeout(r, windowMs));
        return {
          ok: reply.ok,
          written: reply.written,
          session: reply.session ?? null,
          frame: Buffer.from(frame).toString('hex'),
          records: collected,
        };
      } finally {
        sub?.unsubscribe();
      }
    },
  );
};

/** Pointer and signal sizes from the target info of the link's session (QS defaults otherwise). */
function sizesOf(info: Record<string, unknown> | null): Partial<QsRxSizes> {
  const sizes: Partial<QsRxSizes> = {};
  if (!info) return sizes;
  if (typeof info.objPtrSize === 'number') sizes.objPtrSize = info.objPtrSize;
  if (typeof info.funPtrSize === 'number') sizes.funPtrSize = info.funPtrSize;
  if (typeof info.sigSize === 'number') sizes.sigSize = info.sigSize;
  return sizes;
}

export function encodeCommand(enc: QsRxEncoder, c: ControlCommand): Uint8Array {
  switch (c.command) {
    case 'reset':
      return enc.reset();
    case 'info':
      return enc.info();
    case 'tick':
      return enc.tick(c.rate ?? 0);
    case 'command':
      return enc.command(c.cmdId, c.p1 ?? 0, c.p2 ?? 0, c.p3 ?? 0);
    case 'globalFilter':
      return enc.globalFilter(c.records);
    case 'localFilter':
      return enc.localFilter(c.qsIds);
    case 'event':
      return enc.event(c.prio, c.sig, c.params ?? []);
    case 'currentObject':
      return enc.currentObject(c.kind, BigInt(c.address));
    case 'peek':
      return enc.peek(c.offset, c.size, c.num);
    case 'poke':
      return enc.poke(c.offset, c.size, c.items);
    case 'fill':
      return enc.fill(c.offset, c.size, c.num, c.value);
  }
}
