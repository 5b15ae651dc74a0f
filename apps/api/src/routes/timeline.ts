import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses, Timeline, TimelineQuery } from '@tracehub/api-contract';
import {
  type Database,
  getSession,
  type TimelineWindow,
  timelineBuckets,
  timelineItems,
  timelineRecordsAtLeast,
  timelineStateChanges,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { nsOf } from '../schemas.js';

export interface TimelineRoutesOptions {
  db: Kysely<Database>;
}

/** Timelines: what a window of host time holds, per link session and track, at the detail it can show. */
export const timelineRoutes: FastifyPluginAsyncTypebox<TimelineRoutesOptions> = async (app, { db }) => {
  app.addHook('preValidation', async (request) => {
    const q = request.query as Record<string, unknown>;
    if (typeof q.session === 'string' && q.session.includes(',')) q.session = q.session.split(',');
  });

  app.get(
    '/timeline',
    {
      config: { heavy: true },
      schema: {
        summary: 'Timeline of link sessions on one host-time axis',
        description:
          "Per session and track (QS active object, STP master/channel, or the link), the records of a host-time window when there are at most `detail` of them, otherwise their counts in `buckets` equal slices of the window; and the state changes that draw each active object's state intervals. Without from/to, the window is the sessions' whole span.",
        tags: ['sessions'],
        querystring: TimelineQuery,
        response: {
          200: Timeline,
          ...problemResponses,
        },
      },
    },
    async (request) => {
      const q = request.query;
      const sessions = [];
      for (const id of q.session) {
        const s = await getSession(db, id);
        if (!s) throw httpErrors.notFound(`no session ${id}`);
        const first = BigInt((s.first_host_time ?? s.started_at).getTime()) * 1_000_000n;
        const last = BigInt((s.last_host_time ?? s.ended_at ?? s.started_at).getTime() + 1) * 1_000_000n;
        sessions.push({ s, first, last });
      }
      const fromNs = nsOf('from', q.from) ?? earliest(sessions.map((x) => x.first));
      const toNs = nsOf('to', q.to) ?? latest(sessions.map((x) => x.last));
      if (toNs <= fromNs) throw httpErrors.badRequest('querystring to: must be after from');
      const bucketNs = (toNs - fromNs + BigInt(q.buckets) - 1n) / BigInt(q.buckets);
      const lanes = await Promise.all(
        sessions.map(async ({ s, first, last }) => {
          const w: TimelineWindow = { session: s.id, rig: s.rig, link: s.link, fromNs, toNs };
          const overlaps = first < toNs && last > fromNs;
          // A window that surely holds more than `detail` records is counted without reading them.
          const surely = overlaps ? await timelineRecordsAtLeast(db, w) : 0;
          const items = overlaps && surely <= q.detail ? await timelineItems(db, w, q.detail + 1) : [];
          const detail = surely <= q.detail && items.length <= q.detail;
          const [counts, states] = await Promise.all([
            overlaps && !detail ? timelineBuckets(db, w, q.buckets) : { buckets: [], sampleEvery: 1 },
            overlaps ? timelineStateChanges(db, w, 5000) : [],
          ]);
          return {
            session: s.id,
            rig: s.rig,
            link: s.link,
            protocol: s.protocol,
            fromNs: first.toString(),
            toNs: last.toString(),
            detail,
            buckets: counts.buckets,
            sampleEvery: counts.sampleEvery,
            items: detail ? items.map((i) => ({ ...i, seq: Number(i.seq), hostNs: i.hostNs.toString() })) : [],
            states: states.map((c) => ({
              ...c,
              seq: Number(c.seq),
              hostNs: c.hostNs.toString(),
            })),
          };
        }),
      );
      return { fromNs: fromNs.toString(), toNs: toNs.toString(), bucketNs: bucketNs.toString(), lanes };
    },
  );
};

/** The smallest of some ns times (Math.min takes no bigint). */
function earliest(times: bigint[]): bigint {
  let m = times[0];
  for (const t of times) if (t < m) m = t;
  return m;
}

/** The largest of some ns times. */
function latest(times: bigint[]): bigint {
  let m = times[0];
  for (const t of times) if (t > m) m = t;
  return m;
}
