import { httpErrors } from '@fastify/sensible';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  SessionTargetTime,
  SessionTargetTimeQuery,
  TargetRecordsPage,
  TargetRecordsQuery,
  TargetTimelineQuery,
  TargetTimelineReply,
} from '@tracehub/api-contract';
import { targetTimeOf } from '@tracehub/contracts';
import {
  type Database,
  ScanBudget,
  type SessionRow,
  sessionTargetSegments,
  sessionTargetTimeline,
  sessionTargetWindow,
} from '@tracehub/db';
import type { Kysely } from 'kysely';
import { secondsOf, targetWindowOf, tickRateOf, unitOf } from '../target-axis.js';
import { scanSession, sessionScanRoute } from './session-scan.js';
import { mustGetSession } from './sessions.js';

export interface TargetTimeRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

/**
 * A session's target time: its segments, and its records by a window of target time. Records
 * carry their target time in ticks (the decoder unwraps the stamps); the link's `tickRate`
 * setting turns ticks into seconds here, when they are read, so that a rate set or corrected
 * later holds for what was stored before.
 */
export const targetTimeRoutes: FastifyPluginAsyncTypebox<TargetTimeRoutesOptions> = async (
  app,
  { db, scanLimitBytes },
) => {
  const segmentsRoute = sessionScanRoute({
    summary: "A session's target time: its segments between target resets, and its tick rate",
    description:
      "The stretches of the target's clock in a session: a new segment starts at each target reset (QS: a target info with the reset flag). Each segment's first and last target time in ticks (the raw timestamps unwrapped across counter wraps) and, when the link has a `tickRate` setting, in seconds. Reads the blocks' target indexes and the blocks holding each segment's first and last records (and all records of blocks stored before blocks had a target index); `x-tracehub-scanned-bytes` says how many bytes were decoded, and past `API_SCAN_LIMIT_MB` it is a 422.",
    querystring: SessionTargetTimeQuery,
    reply: SessionTargetTime,
  });
  const everyProtocol = { protocols: ['qs', 'stp', 'swd'], notFor: () => '' };
  app.get('/sessions/:id/target-time', segmentsRoute, async (request, reply) =>
    scanSession(db, request.params.id, scanLimitBytes, reply, {
      ...everyProtocol,
      read: (session, budget) => targetSegmentsOf(db, session, budget),
    }),
  );

  app.get(
    '/sessions/:id/target-records',
    sessionScanRoute({
      summary: "A session's records in a window of target time",
      description:
        "The records of one target segment whose target time is in `[from, to)`, in target-time order, a page of `limit` at a time (`next` is the `afterSeq` of the next page). `unit=s` reads `from` and `to` as seconds, by the link's `tickRate` setting (400 without one). Each record comes with its target time in ticks and, with a tick rate, in seconds. Reads the session's blocks from `afterSeq` to the end of the window, skipping those whose target-time summary puts them before it; past `API_SCAN_LIMIT_MB` it is a 422.",
      querystring: TargetRecordsQuery,
      reply: TargetRecordsPage,
    }),
    async (request, reply) => {
      const session = await mustGetSession(db, request.params.id);
      const q = request.query;
      const { tickRate, fromTicks, toTicks } = await targetWindowOf(db, session, q);
      const budget = new ScanBudget(scanLimitBytes);
      const page = await sessionTargetWindow(db, session.id, {
        segment: q.segment,
        fromTicks,
        toTicks,
        afterSeq: q.afterSeq,
        limit: q.limit,
        budget,
      });
      reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
      const records = page.records.map((record) => {
        const targetTicks = targetTimeOf(record) ?? '0';
        return { targetTicks, targetSeconds: secondsOf(targetTicks, tickRate), record };
      });
      const last = page.records[page.records.length - 1];
      return {
        session: session.id,
        segment: q.segment,
        tickRate,
        unit: unitOf(tickRate),
        records,
        next: page.more && last !== undefined ? last.seq : null,
      };
    },
  );

  app.get(
    '/sessions/:id/target-timeline',
    sessionScanRoute({
      summary: "A timeline of a session's target time",
      description:
        "One target segment's records per lane (QS active object, STP master/channel, or the link itself: null), counted in `buckets` equal slices of a window of target time, exactly (from the blocks' target indexes: only the blocks whose target time overlaps the window are read), and the records themselves (with their text) when the window holds at most `detail`. Without `from`/`to` the window is the whole segment. `unit=s` reads `from` and `to` as seconds by the link's tick rate.",
      querystring: TargetTimelineQuery,
      reply: TargetTimelineReply,
    }),
    async (request, reply) => {
      const session = await mustGetSession(db, request.params.id);
      const q = request.query;
      const { tickRate, fromTicks, toTicks } = await targetWindowOf(db, session, q);
      if (fromTicks !== undefined && toTicks !== undefined && toTicks <= fromTicks)
        throw httpErrors.badRequest('querystring to: must be after from');
      const budget = new ScanBudget(scanLimitBytes);
      const t = await sessionTargetTimeline(db, session.id, {
        segment: q.segment,
        fromTicks,
        toTicks,
        buckets: q.buckets,
        detail: q.detail,
        budget,
      });
      reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
      const seconds = (ticks: bigint | null) => (ticks === null ? null : secondsOf(ticks, tickRate));
      return {
        session: session.id,
        segment: t.segment,
        tickRate,
        unit: unitOf(tickRate),
        fromTicks: t.fromTicks?.toString() ?? null,
        toTicks: t.toTicks?.toString() ?? null,
        fromSeconds: seconds(t.fromTicks),
        toSeconds: seconds(t.toTicks),
        bucketTicks: t.bucketTicks.toString(),
        records: t.records,
        errors: t.errors,
        lanes: t.lanes,
        items: t.items?.map((i) => ({ ...i, targetSeconds: secondsOf(i.targetTicks, tickRate) })) ?? null,
      };
    },
  );
};

/** A session's target segments, with seconds when its link's tick rate is known. */
async function targetSegmentsOf(db: Kysely<Database>, session: SessionRow, budget: ScanBudget) {
  const tickRate = await tickRateOf(db, session);
  const { segments, untimed } = await sessionTargetSegments(db, session.id, { budget });
  return {
    tickRate,
    unit: unitOf(tickRate),
    untimed,
    segments: segments.map((s) => ({
      ...s,
      firstSeconds: secondsOf(s.firstTicks, tickRate),
      lastSeconds: secondsOf(s.lastTicks, tickRate),
    })),
  };
}
