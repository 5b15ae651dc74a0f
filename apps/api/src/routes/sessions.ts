import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  DictionariesReply,
  problemResponses,
  RedecodeRequest,
  RedecodeResult,
  SequenceQuery,
  SequenceReply,
  Session,
  SessionParams,
  SessionsPage,
  sessionsQuery,
} from '@tracehub/api-contract';
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
import { instantOf } from '../schemas.js';
import { sequenceDiagram } from '../sequence-diagram.js';

export interface SessionRoutesOptions {
  db: Kysely<Database>;
  maxPageSize: number;
}

export function sessionJson(s: SessionRow): Session {
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

/** Sessions: list, one session, its dictionaries, its sequence diagram. */
export const sessionRoutes: FastifyPluginAsyncTypebox<SessionRoutesOptions> = async (app, { db, maxPageSize }) => {
  app.get(
    '/sessions',
    {
      schema: {
        summary: 'Sessions, newest first',
        tags: ['sessions'],
        querystring: sessionsQuery(maxPageSize),
        response: {
          200: SessionsPage,
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
        summary: "Decode the session's stored link bytes again with the link's current settings (no body, or {})",
        description:
          "Decodes the exact bytes the link sent in this session again, with the link's current settings (and over them those the gateway sent with the session: its TRACEHUB_LINKS address query or `tracehub replay` flags, as the decoder service takes them) and this server's decoder, fed chunk by chunk as the decoder service feeds them, and replaces the session's records, dictionaries and counts in one transaction (readers see the old records until it commits). For a settings fix (an STP link decoded without its version or masters) or after a decoder upgrade. The session starts with an empty codec: dictionaries a QS decoder learnt in the link's earlier sessions (kept across a reconnect without a reset, as qspy keeps them) are not carried into it. 409 when the session has not ended, when its link bytes are not all stored yet (try again shortly), or when it has none (stored before link bytes were kept).",
        tags: ['sessions'],
        params: SessionParams,
        body: RedecodeRequest,
        response: {
          200: RedecodeResult,
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
          200: DictionariesReply,
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
        querystring: SequenceQuery,
        response: {
          200: SequenceReply,
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
