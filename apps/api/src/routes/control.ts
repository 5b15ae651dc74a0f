import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  type AnswerRecord,
  CONTROL_COMMANDS,
  CommandReply,
  CommandRequest,
  ControlState,
  commandSchemas,
  EmptyBody,
  gatewayErrors,
  problemResponses,
} from '@tracehub/api-contract';
import type { Bus, ControlAsk } from '@tracehub/bus';
import type { ControlReply, ControlRequest, TraceRecord } from '@tracehub/contracts';
import { type Database, latestSession } from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import { buildCommand, CommandFieldError, QsTargetLink } from '@tracehub/qspy-frontend';
import type { Kysely } from 'kysely';
import { askGateway } from '../ask-gateway.js';
import { linkRoute, mustGetLink } from './link-route.js';

export interface ControlRoutesOptions {
  db: Kysely<Database>;
  bus: Bus;
  /** The api's one live record feed: a reply window collects the link's records from it. */
  feed: RecordFeed;
  timeoutMs: number;
}

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

  async function qsLink(id: number | string) {
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
        body: CommandRequest,
        response: { 200: CommandReply, ...controlErrors },
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
          outcome: r.outcome as CommandReply['outcome'],
          answer: (r.answer ?? null) as AnswerRecord | null,
          ...(reply.error ? { error: reply.error } : {}),
          written: reply.written,
          session: reply.session ?? null,
          frame: String(r.frame),
          rxSeq: Number(r.rxSeq),
          resolved: (r.resolved ?? {}) as Record<string, string>,
          output: (r.records ?? []) as AnswerRecord[],
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
    (request: { status: true } | { releaseFrontEnd: true }) => async (req: { params: { id: number | string } }) => {
      const link = await qsLink(req.params.id);
      const reply = await ask(link.rig, link.name, request, timeoutMs);
      if (!reply.status)
        throw httpErrors.badGateway(`the gateway has no control state: ${reply.error ?? 'unknown error'}`);
      return reply.status as ControlState;
    };
  const stateRoute = (summary: string, body?: TSchema) =>
    linkRoute(
      // No `body` key at all on a GET: Fastify warns of a body schema set to undefined.
      { summary, tags: ['control'], ...(body && { body }), response: { 200: ControlState, ...controlErrors } },
      'control',
    );
  app.get(
    '/links/:id/control',
    stateRoute("A link's QS control point: target, dictionaries, and its front-end port (who is attached)"),
    controlState({ status: true }),
  );
  app.post(
    '/links/:id/frontend/release',
    stateRoute('Free the front-end port of a link from the front-end holding it (it gets DETACH)', EmptyBody),
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
  if (!schema) throw httpErrors.badRequest(`body command.command: one of ${Object.keys(CONTROL_COMMANDS).join(', ')}`);
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
