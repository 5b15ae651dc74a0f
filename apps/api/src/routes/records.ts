import { Readable } from 'node:stream';
import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import {
  problemResponses,
  RecordsExportQuery,
  RecordsPage,
  recordsQuery,
  SessionExportQuery,
  SessionParams,
} from '@tracehub/api-contract';
import { EXPORT_SCOPE_NEEDED, isExportAllowed } from '@tracehub/contracts/export-formats';
import {
  type Database,
  filteredRecords,
  getSession,
  positionOf,
  recordsPage,
  ScanBudget,
  sessionRecords,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { decodeRecordCursor, encodeRecordCursor } from '../cursor.js';
import {
  EXPORT_CONTENT_TYPES,
  EXPORT_EXTENSIONS,
  exportChunks,
  linkByteChunks,
  toRecord,
} from '../exports/export-formats.js';
import { splitListParams, toRecordFilter } from '../schemas.js';
import { tickRateOf } from '../target-axis.js';
import { mustGetSession } from './sessions.js';

export interface RecordRoutesOptions {
  db: Kysely<Database>;
  maxPageSize: number;
  /** Record bytes one page may read (after pruning by block summaries) before it is refused (422). */
  scanLimitBytes: number;
}

/** A streamed export (a string in the OpenAPI document; the route sends a stream). */
const ExportBody = Type.Unsafe<Readable>(Type.String({ description: 'the export' }));

/** Records: filtered pages with keyset cursors, and exports of a session or a filtered range. */
export const recordRoutes: FastifyPluginAsyncTypebox<RecordRoutesOptions> = async (
  app,
  { db, maxPageSize, scanLimitBytes },
) => {
  app.addHook('preValidation', async (request) => {
    if (request.query && typeof request.query === 'object') splitListParams(request.query as Record<string, unknown>);
  });

  app.get(
    '/records',
    {
      config: { heavy: true },
      schema: {
        summary: 'Records matching filters, a page at a time',
        description:
          'Keyset pagination: pass `next` back as `cursor` for the following page, `prev` for the page before. `order=desc` (default) is newest first.',
        tags: ['records'],
        querystring: recordsQuery(maxPageSize),
        response: {
          200: RecordsPage,
          ...problemResponses,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const filter = toRecordFilter(q);
      const cursor = q.cursor ? decodeRecordCursor(q.cursor, q.order) : undefined;
      const budget = new ScanBudget(scanLimitBytes);
      const page = await recordsPage(db, filter, {
        order: q.order,
        limit: q.limit,
        after: cursor?.direction === 'after' ? cursor.position : undefined,
        before: cursor?.direction === 'before' ? cursor.position : undefined,
        budget,
      });
      // What the page cost: record bytes decoded after pruning blocks by their summaries.
      reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
      const first = page.rows[0];
      const last = page.rows[page.rows.length - 1];
      return {
        records: page.rows.map(toRecord),
        next:
          page.hasMore && last
            ? encodeRecordCursor({ order: q.order, direction: 'after', position: positionOf(last) })
            : null,
        prev:
          page.hasPrevious && first
            ? encodeRecordCursor({ order: q.order, direction: 'before', position: positionOf(first) })
            : null,
      };
    },
  );

  app.get(
    '/records/export',
    {
      config: { queryToken: true, heavy: true },
      schema: {
        summary: 'Export of the records matching filters (oldest first), streamed',
        tags: ['records'],
        querystring: RecordsExportQuery,
        produces: Object.values(EXPORT_CONTENT_TYPES),
        response: { 200: ExportBody, ...problemResponses },
      },
    },
    async (request, reply) => {
      const { format, ...rest } = request.query;
      const filter = toRecordFilter(rest);
      if (!isExportAllowed(filter)) throw httpErrors.badRequest(`querystring: ${EXPORT_SCOPE_NEEDED}`);
      const chunks = exportChunks(filteredRecords(db, filter, 'asc'), format, sessionTickRate(db));
      return reply
        .type(EXPORT_CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="records.${EXPORT_EXTENSIONS[format]}"`)
        .send(await streamOf(chunks));
    },
  );

  app.get(
    '/sessions/:id/export',
    {
      config: { queryToken: true, heavy: true },
      schema: {
        summary: 'Export of a whole session in seq order, streamed',
        tags: ['sessions'],
        params: SessionParams,
        querystring: SessionExportQuery,
        produces: Object.values(EXPORT_CONTENT_TYPES),
        response: { 200: ExportBody, ...problemResponses },
      },
    },
    async (request, reply) => {
      const session = await mustGetSession(db, request.params.id);
      const { format } = request.query;
      // The link's own bytes when they were kept; a session stored before that, from its records.
      const fromLink = format === 'raw' && session.link_chunks > 0;
      const chunks = fromLink
        ? linkByteChunks(db, session.id)
        : exportChunks(sessionRecords(db, session.id), format, sessionTickRate(db));
      const safe = session.id.replace(/[^A-Za-z0-9_.-]/g, '_');
      if (format === 'raw') {
        reply.header('x-tracehub-raw-source', fromLink ? 'link' : 'records');
        if (fromLink) reply.header('x-tracehub-lost-bytes', String(session.link_lost_bytes));
      }
      // Totals for a client's progress bar (`tracehub export --api`): the body is streamed, without a length.
      if (fromLink) reply.header('x-tracehub-link-bytes', String(session.link_bytes));
      else reply.header('x-tracehub-records', String(session.record_count));
      return reply
        .type(EXPORT_CONTENT_TYPES[format])
        .header('content-disposition', `attachment; filename="${safe}.${EXPORT_EXTENSIONS[format]}"`)
        .send(await streamOf(chunks));
    },
  );
};

/**
 * A readable stream of the export that has already produced its first piece: a query error
 * (database away) then still becomes a problem response instead of a cut-off download.
 */
async function streamOf(chunks: AsyncGenerator<Buffer>): Promise<Readable> {
  const first = await chunks.next();
  async function* rest() {
    if (!first.done) yield first.value;
    yield* chunks;
  }
  return Readable.from(rest(), { objectMode: false });
}

/** The tick rate of a session's link (a Perfetto export's µs), by session id. */
const sessionTickRate = (db: Kysely<Database>) => async (id: string) => {
  const session = await getSession(db, id);
  return session ? tickRateOf(db, session) : null;
};
