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
      summary: 'Numeric fields of records over target time, downsampled to pixel columns',
      description:
        "Each series (`series=NAME:field`, up to 8): the numbers at `field` (a dotted path in the records' fields: `values.0` is a QS user record's first argument) of the records named NAME in one target segment, in the window `[from, to)` of target time (default: from the first value of any series to just after the last of any), read in one pass. The window is cut into `columns` equal pixel columns, the same for every series, and each column holding values of a series gets its count, min, max, first and last; `/series/export` gives every value as CSV. Records whose field is not a number are counted in `skipped`. Only the blocks whose summary names one of the records are read; past `API_SCAN_LIMIT_MB` it is a 422.",
      querystring: SeriesQuery,
      reply: SeriesReply,
    }),
    async (request, reply) => {
      const q = request.query;
      const { session, window, series, asked } = await readSeries(request.params.id, q, reply);
      // One window for every series, so that their columns line up: the query's, else from
      // the first value of any to just after the last of any.
      let fromTicks = window.fromTicks;
      let toTicks = window.toTicks;
      for (const { points } of series) {
        if (points.length === 0) continue;
        if (window.fromTicks === undefined && (fromTicks === undefined || points[0].ticks < fromTicks))
          fromTicks = points[0].ticks;
        const after = points[points.length - 1].ticks + 1n;
        if (window.toTicks === undefined && (toTicks === undefined || after > toTicks)) toTicks = after;
      }
      const cut = fromTicks !== undefined && toTicks !== undefined && toTicks > fromTicks;
      return {
        session: session.id,
        segment: q.segment,
        tickRate: window.tickRate,
        unit: unitOf(window.tickRate),
        fromTicks: fromTicks === undefined ? null : String(fromTicks),
        toTicks: toTicks === undefined ? null : String(toTicks),
        columns: q.columns,
        series: series.map(({ points, skipped }, i) => {
          const columns = cut ? downsampleSeries(points, fromTicks as bigint, toTicks as bigint, q.columns) : [];
          return {
            ...asked[i],
            points: columns.reduce((n, c) => n + c.count, 0),
            skipped,
            min: columns.length === 0 ? null : Math.min(...columns.map((c) => c.min)),
            max: columns.length === 0 ? null : Math.max(...columns.map((c) => c.max)),
            columns: columns.map((c) => ({
              ...c,
              fromTicks: String(c.fromTicks),
              toTicks: String(c.toTicks),
              fromSeconds: secondsOf(c.fromTicks, window.tickRate),
            })),
          };
        }),
      };
    },
  );

  app.get(
    '/sessions/:id/series/export',
    {
      config: { queryToken: true, heavy: true },
      schema: {
        summary: 'Every value of the series as CSV',
        description:
          'The values `GET /sessions/{id}/series` plots, one line each: `series,seq,target_ticks,target_s,value` (`series` is `NAME:field`; `target_s` empty without a tick rate), RFC 4180.',
        tags: ['sessions'],
        params: SessionParams,
        querystring: SeriesQuery,
        produces: ['text/csv'],
        response: { 200: Type.String({ description: 'the CSV' }), ...problemResponses, 422: ProblemSchema },
      },
    },
    async (request, reply) => {
      const { session, window, series, asked } = await readSeries(request.params.id, request.query, reply);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${session.id}-series.csv"`.replace(/[^ -~]/g, '_'))
        .send(seriesCsv(asked, series, window.tickRate));
    },
  );

  /** The values of a series query, read within the scan budget (the reply says how much was read). */
  async function readSeries(id: string, q: SeriesQuery, reply: FastifyReply) {
    const session = await mustGetSession(db, id);
    const window = await targetWindowOf(db, session, q);
    const asked = q.series.map(seriesOf);
    const budget = new ScanBudget(scanLimitBytes);
    const series = await sessionRecordSeries(db, session.id, {
      series: asked,
      segment: q.segment,
      fromTicks: window.fromTicks,
      toTicks: window.toTicks,
      budget,
    });
    reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
    return { session, window, series, asked };
  }
};

/** `NAME:field` as its two parts, split at the last colon (the schema's pattern has been checked). */
function seriesOf(text: string): { name: string; field: string } {
  const at = text.lastIndexOf(':');
  return { name: text.slice(0, at), field: text.slice(at + 1) };
}

/**
 * Every value as CSV (RFC 4180): the series (`NAME:field`), seq, target time in ticks and
 * seconds (empty without a tick rate), value; series after series.
 */
function seriesCsv(
  asked: ReadonlyArray<{ name: string; field: string }>,
  series: ReadonlyArray<{ points: readonly SeriesPoint[] }>,
  tickRate: number | null,
): string {
  const lines = ['series,seq,target_ticks,target_s,value'];
  series.forEach(({ points }, i) => {
    const label = `"${`${asked[i].name}:${asked[i].field}`.replaceAll('"', '""')}"`;
    for (const p of points) {
      lines.push(`${label},${p.seq},${p.ticks},${secondsOf(p.ticks, tickRate) ?? ''},${p.value}`);
    }
  });
  return `${lines.join('\r\n')}\r\n`;
}
