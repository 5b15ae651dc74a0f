import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ProblemSchema } from '@tracehub/contracts';
import {
  type Database,
  getLinkByName,
  getSession,
  isSessionComplete,
  type SessionRow,
  sessionDictionaries,
  sessionRecords,
  sessionsPage,
} from '@tracehub/db';
import { RedecodeError, redecodeSession } from '@tracehub/decoders';
import { dictionaryFileOfRecords } from '@tracehub/qs';
import type { Kysely } from 'kysely';
import { decodeSessionCursor, encodeSessionCursor } from '../cursor.js';
import { Instant, instantOf, LinkName, problemResponses, RigName, SessionId } from '../schemas.js';
import { sequenceDiagram } from '../sequence-diagram.js';

export interface SessionRoutesOptions {
  db: Kysely<Database>;
  maxPageSize: number;
}

const nullableInstant = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const Session = Type.Object({
  id: Type.String(),
  rig: Type.String(),
  link: Type.String(),
  protocol: Type.String(),
  startedAt: Type.String({ format: 'date-time' }),
  endedAt: nullableInstant,
  firstRecordAt: nullableInstant,
  lastRecordAt: nullableInstant,
  records: Type.Integer(),
  errors: Type.Integer(),
  gaps: Type.Integer(),
  lostBytes: Type.Integer(),
  recordTotal: Type.Union([Type.Integer(), Type.Null()], { description: 'records in all, once the end was decoded' }),
  complete: Type.Boolean({ description: 'ended, and every record stored' }),
  recordsRefused: Type.Integer({
    description:
      'records the decoder published that Postgres refused as data: never stored, each batch kept as a loss (GET /sessions/{id}/losses); records + recordsRefused = recordTotal once complete or refused',
  }),
  targetInfo: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
    description: 'what the target reported about itself (QS target info)',
  }),
});

export function sessionJson(s: SessionRow) {
  return {
    id: s.id,
    rig: s.rig,
    link: s.link,
    protocol: s.protocol,
    startedAt: s.started_at.toISOString(),
    endedAt: s.ended_at?.toISOString() ?? null,
    firstRecordAt: s.first_host_time?.toISOString() ?? null,
    lastRecordAt: s.last_host_time?.toISOString() ?? null,
    records: Number(s.record_count),
    errors: Number(s.error_count),
    gaps: Number(s.gap_count),
    lostBytes: Number(s.lost_bytes),
    recordTotal: s.record_total === null ? null : Number(s.record_total),
    complete: isSessionComplete(s),
    recordsRefused: Number(s.records_refused),
    targetInfo: s.target_info,
  };
}

const SessionParams = Type.Object({ id: SessionId });

const StepBase = {
  seq: Type.Integer({ description: 'seq of the record that starts the step' }),
  targetTs: Type.Union([Type.String(), Type.Null()]),
  hostNs: Type.String({ description: 'host receive time, ns since the epoch' }),
};

const Step = Type.Union([
  Type.Object({
    kind: Type.Literal('post'),
    ...StepBase,
    from: Type.String(),
    to: Type.String(),
    sig: Type.String(),
  }),
  Type.Object({
    kind: Type.Literal('timeout'),
    ...StepBase,
    from: Type.String({ description: 'the ticker that posted the time event (or the time event object)' }),
    to: Type.String(),
    sig: Type.String(),
    deliverySeq: Type.Union([Type.Integer(), Type.Null()], { description: 'seq of the AO-Post that delivered it' }),
  }),
  Type.Object({
    kind: Type.Literal('publish'),
    ...StepBase,
    from: Type.String(),
    sig: Type.String(),
    deliveries: Type.Array(Type.Object({ to: Type.String(), seq: Type.Integer() }), {
      description: 'the AO-Posts that delivered the event to each subscriber',
    }),
  }),
  Type.Object({
    kind: Type.Literal('state'),
    ...StepBase,
    obj: Type.String(),
    from: Type.Union([Type.String(), Type.Null()], { description: 'null for an initial transition' }),
    to: Type.String(),
    sig: Type.Union([Type.String(), Type.Null()]),
  }),
]);

/** Sessions: list, one session, its dictionaries, its sequence diagram. */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (app, { db, maxPageSize }) => {
  app.get(
    '/sessions',
    {
      schema: {
        summary: 'Sessions, newest first',
        tags: ['sessions'],
        querystring: Type.Object({
          rig: Type.Optional(RigName),
          link: Type.Optional(LinkName),
          from: Type.Optional(Instant),
          to: Type.Optional(Instant),
          limit: Type.Integer({ minimum: 1, maximum: maxPageSize, default: 50 }),
          cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 400 })),
        }),
        response: {
          200: Type.Object({ sessions: Type.Array(Session), next: Type.Union([Type.String(), Type.Null()]) }),
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const from = instantOf('from', q.from);
      const to = instantOf('to', q.to);
      if (from && to && from > to) throw httpErrors.badRequest('querystring: from is after to');
      const page = await sessionsPage(
        db,
        { rig: q.rig, link: q.link, from, to },
        { limit: q.limit, after: q.cursor ? decodeSessionCursor(q.cursor) : undefined },
      );
      return {
        sessions: page.rows.map(sessionJson),
        next: page.hasMore && page.last ? encodeSessionCursor(page.last) : null,
      };
    },
  );

  app.get(
    '/sessions/:id',
    {
      schema: {
        summary: 'One session: target info, time span, record/error/gap counts',
        tags: ['sessions'],
        params: SessionParams,
        response: { 200: Session, ...problemResponses },
      },
    },
    async (request) => sessionJson(await mustGetSession(db, request.params.id)),
  );

  app.post(
    '/sessions/:id/redecode',
    {
      config: { scope: 'control', heavy: true },
      schema: {
        summary: "Decode the session's stored link bytes again with the link's current settings",
        description:
          "Decodes the exact bytes the link sent in this session again, with the link's current settings (and over them those the gateway sent with the session: its TRACEHUB_LINKS address query or `tracehub replay` flags, as the decoder service takes them) and this server's decoder, fed chunk by chunk as the decoder service feeds them, and replaces the session's records, dictionaries and counts in one transaction (readers see the old records until it commits). For a settings fix (an STP link decoded without its version or masters) or after a decoder upgrade. The session starts with an empty codec: dictionaries a QS decoder learnt in the link's earlier sessions (kept across a reconnect without a reset, as qspy keeps them) are not carried into it. 409 when the session has not ended, when its link bytes are not all stored yet (try again shortly), or when it has none (stored before link bytes were kept).",
        tags: ['sessions'],
        params: SessionParams,
        response: {
          200: Type.Object({
            session: Type.String(),
            settings: Type.Record(Type.String(), Type.Unknown(), { description: 'the settings it was decoded with' }),
            chunks: Type.Integer(),
            bytes: Type.Integer({ description: 'link bytes decoded' }),
            records: Type.Integer(),
            errors: Type.Integer(),
            gaps: Type.Integer(),
            previousRecords: Type.Integer({ description: 'records the session had before' }),
            settingsRefused: Type.Optional(
              Type.String({
                description:
                  "why the codec refused the link's settings (a .dic it cannot read): the session was decoded with the defaults, as the decoder service would",
              }),
            ),
            ms: Type.Number(),
          }),
          ...problemResponses,
          409: ProblemSchema,
        },
      },
    },
    async (request) => {
      try {
        return await redecodeSession(db, request.params.id);
      } catch (err) {
        if (err instanceof RedecodeError)
          throw err.code === 'not-found' ? httpErrors.notFound(err.message) : httpErrors.conflict(err.message);
        throw err;
      }
    },
  );

  app.get(
    '/sessions/:id/dictionaries',
    {
      schema: {
        summary: "The session's dictionaries (object, function, signal, user record names)",
        tags: ['sessions'],
        params: SessionParams,
        response: {
          200: Type.Object({
            entries: Type.Array(Type.Object({ kind: Type.String(), key: Type.String(), name: Type.String() })),
          }),
          ...problemResponses,
        },
      },
    },
    async (request) => {
      await mustGetSession(db, request.params.id);
      return { entries: await sessionDictionaries(db, request.params.id) };
    },
  );

  app.get(
    '/sessions/:id/dictionaries.dic',
    {
      schema: {
        summary: "The session's dictionaries as the qspy .dic file SAVE_DICT would write at its end",
        description:
          'Load it into qspy (-d FILE) or give it to another QS link (PUT /links/{id}/settings with `dictionaries`, or `tracehub dict import`).',
        tags: ['sessions'],
        params: SessionParams,
        produces: ['text/plain'],
        response: {
          200: Type.Unsafe<Buffer>(Type.String({ description: 'the .dic text (Latin-1)' })),
          ...problemResponses,
        },
      },
    },
    async (request, reply) => {
      const session = await mustGetSession(db, request.params.id);
      if (session.protocol !== 'qs')
        throw httpErrors.badRequest(`session ${session.id} is ${session.protocol}: .dic files are QS`);
      const link = await getLinkByName(db, session.rig, session.link);
      const sizes = Object.fromEntries(Object.entries(link?.settings ?? {}).filter(([, v]) => typeof v === 'number'));
      const text = await dictionaryFileOfRecords(sessionRecords(db, session.id), sizes);
      return reply
        .type('text/plain')
        .header('content-disposition', `attachment; filename="${session.id}.dic"`)
        .send(Buffer.from(text, 'latin1'));
    },
  );

  app.get(
    '/sessions/:id/sequence',
    {
      config: { heavy: true },
      schema: {
        summary: 'Sequence diagram of a QS session',
        description:
          'Events exchanged between active objects (posts, publishes with their deliveries, time events) and the state changes of each object, in record order, each drawn once. Page with `after=nextAfter`.',
        tags: ['sessions'],
        params: SessionParams,
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 20_000, default: 2000, description: 'steps per page' }),
          after: Type.Integer({
            minimum: -1,
            default: -1,
            description: 'start after this seq (`nextAfter` of a page)',
          }),
        }),
        response: {
          200: Type.Object({
            session: Type.String(),
            participants: Type.Array(Type.String()),
            steps: Type.Array(Step),
            truncated: Type.Boolean(),
            nextAfter: Type.Union([Type.Integer(), Type.Null()], { description: '`after` of the next page' }),
          }),
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const session = await mustGetSession(db, request.params.id);
      if (session.protocol !== 'qs')
        throw httpErrors.badRequest(
          `session ${session.id} is ${session.protocol}; sequence diagrams are drawn from QS sessions`,
        );
      const { limit, after } = request.query;
      const diagram = await sequenceDiagram(sessionRecords(db, session.id, 5000, BigInt(after)), limit, after);
      return { session: session.id, ...diagram };
    },
  );
};

export async function mustGetSession(db: Kysely<Database>, id: string): Promise<SessionRow> {
  const session = await getSession(db, id);
  if (!session) throw httpErrors.notFound(`no session ${id}`);
  return session;
}
