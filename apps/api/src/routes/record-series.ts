import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { problemResponses, SeriesQuery, SeriesReply, SessionParams } from '@tracehub/api-contract';
import { ProblemSchema } from '@tracehub/contracts';
import { type Database, downsampleSeries, ScanBudget, type SeriesPoint, sessionRecordSeries } from '@tracehub/db';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { secondsOf, targetWindowOf, unitOf } from '../target-axis.js';
import { sessionScanRoute } from './session-scan.js';
import { mustGetSession } from './sessions.js';

export interface RecordSeriesRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

/**
 * Value plots: a numeric field of a record name over target time, cut into pixel columns on
 * the server (min and max of each) so that a million values draw as fast as a few hundred;
 * or every value as CSV.
 */
export const recordSeriesRoutes: FastifyPluginAsyncTypebox<RecordSeriesRoutesOptions> = async (
  app,
  { db, scanLimitBytes },
) => {
  app.get(
    '/sessions/:id/series',
    sessionScanRoute({
      summary: 'A numeric field of a record name over target time, downsampled to pixel columns',
      description:
        "The values of `field` (a dotted path in the records' fields: `values.0` is a QS user record's first argument) of the records named `name` in one target segment, in the window `[from, to)` of target time (default: from the first value to just after the last). It cuts the window into `columns` equal pixel columns and gives each column holding values its count, min, max, first and last; `/series/export` gives every value as CSV. Records whose field is not a number are counted in `skipped`. Only the blocks whose summary names the record are read; past `API_SCAN_LIMIT_MB` it is a 422.",
      querystring: SeriesQuery,
      reply: SeriesReply,
    }),
    async (request, reply) => {
      const q = request.query;
      const { session, window, points, skipped } = await readSeries(request.params.id, q, reply);
      const fromTicks = window.fromTicks ?? points[0]?.ticks;
      const toTicks = window.toTicks ?? (points.length > 0 ? points[points.length - 1].ticks + 1n : undefined);
      const columns =
        fromTicks !== undefined && toTicks !== undefined && toTicks > fromTicks
          ? downsampleSeries(points, fromTicks, toTicks, q.columns)
          : [];
      let min: number | null = null;
      let max: number | null = null;
      for (const c of columns) {
        if (min === null || c.min < min) min = c.min;
        if (max === null || c.max > max) max = c.max;
      }
      return {
        session: session.id,
        name: q.name,
        field: q.field,
        segment: q.segment,
        tickRate: window.tickRate,
        unit: unitOf(window.tickRate),
        fromTicks: fromTicks === undefined ? null : String(fromTicks),
        toTicks: toTicks === undefined ? null : String(toTicks),
        points: columns.reduce((n, c) => n + c.count, 0),
        skipped,
        min,
        max,
        columns: columns.map((c) => ({
          ...c,
          fromTicks: String(c.fromTicks),
          toTicks: String(c.toTicks),
          fromSeconds: secondsOf(String(c.fromTicks), window.tickRate),
        })),
      };
    },
  );

  app.get(
    '/sessions/:id/series/export',
    {
      config: { queryToken: true, heavy: true },
      schema: {
        summary: 'Every value of a series as CSV',
        description:
          'The values `GET /sessions/{id}/series` plots, one line each: `seq,target_ticks,target_s,value` (`target_s` empty without a tick rate), RFC 4180.',
        tags: ['sessions'],
        params: SessionParams,
        querystring: SeriesQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'the CSV' }), ...problemResponses, 422: ProblemSchema },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { session, window, points } = await readSeries(request.params.id, q, reply);
      const file = `${session.id}-${q.name}-${q.field}.csv`.replace(/[^A-Za-z0-9_.-]/g, '_');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${file}"`)
        .send(seriesCsv(points, window.tickRate));
    },
  );

  /** The values of a series query, read within the scan budget (the reply says how much was read). */
  async function readSeries(id: string, q: SeriesQuery, reply: FastifyReply) {
    const session = await mustGetSession(db, id);
    const window = await targetWindowOf(db, session, q);
    const budget = new ScanBudget(scanLimitBytes);
    const { points, skipped } = await sessionRecordSeries(db, session.id, {
      name: q.name,
      field: q.field,
      segment: q.segment,
      fromTicks: window.fromTicks,
      toTicks: window.toTicks,
      budget,
    });
    reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
    return { session, window, points, skipped };
  }
};

/** Every value as CSV (RFC 4180): seq, target time in ticks and seconds (empty without a tick rate), value. */
function seriesCsv(points: readonly SeriesPoint[], tickRate: number | null): string {
  const lines = ['seq,target_ticks,target_s,value'];
  for (const p of points) {
    const seconds = tickRate === null ? '' : String(Number(p.ticks) / tickRate);
    lines.push(`${p.seq},${p.ticks},${seconds},${p.value}`);
  }
  return `${lines.join('\r\n')}\r\n`;
}
