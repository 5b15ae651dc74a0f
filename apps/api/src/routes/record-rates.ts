import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses, RatesQuery, RatesReply } from '@tracehub/api-contract';
import { bucketWidthNs, type Database, recordRates } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { instantOf } from '../schemas.js';

export interface RecordRatesRoutesOptions {
  db: Kysely<Database>;
}

/** `GET /rates`: records/s, errors and gaps per link over a host-time range, for the plots. */
export const recordRatesRoutes: FastifyPluginAsyncTypebox<RecordRatesRoutesOptions> = async (app, { db }) => {
  app.get(
    '/rates',
    {
      schema: {
        summary: 'Records per second, errors and gaps per link over time',
        description:
          "Per link (of `rig`, or `link` of it, or the fleet), the records, error records and sequence gaps in each of `buckets` equal slices of [from, to), host time, and the record rate of each slice. Counted from the stored blocks' summaries, never their records: a block's counts are spread over its host-time span (so counts may be fractional), which keeps a window of weeks as fast as one of minutes. Links without records in the range are left out.",
        tags: ['fleet'],
        querystring: RatesQuery,
        response: {
          200: RatesReply,
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const from = instantOf('from', q.from)!;
      const to = instantOf('to', q.to)!;
      if (from.getTime() >= to.getTime()) throw httpErrors.badRequest('querystring to: must be after from');
      const fromNs = BigInt(from.getTime()) * 1_000_000n;
      const toNs = BigInt(to.getTime()) * 1_000_000n;
      const window = { rig: q.rig, link: q.link, fromNs, toNs, buckets: q.buckets };
      const widthNs = bucketWidthNs(window);
      const starts = Array.from({ length: q.buckets }, (_, i) => fromNs + BigInt(i) * widthNs);
      // Seconds each slice covers: the last one (or more, when the width was rounded up) ends at `to`.
      const seconds = starts.map((start) => {
        const end = start + widthNs < toNs ? start + widthNs : toNs;
        return end > start ? Number(end - start) / 1e9 : 0;
      });
      const series = await recordRates(db, window);
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        bucketMs: Number(widthNs) / 1e6,
        times: starts.map((ns) => Number(ns / 1000n) / 1000),
        links: series.map((s) => ({
          ...s,
          recordsPerSecond: s.records.map((n, i) => (seconds[i] > 0 ? Math.round((n / seconds[i]) * 1000) / 1000 : 0)),
        })),
      };
    },
  );
};
