import { httpErrors } from '@fastify/sensible';
import type { TObject, TSchema } from '@sinclair/typebox';
import { problemResponses, SessionParams } from '@tracehub/api-contract';
import { ProblemSchema } from '@tracehub/contracts';
import { type Database, ScanBudget, type SessionRow } from '@tracehub/db';
import type { FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import { mustGetSession } from './sessions.js';

/**
 * The options of a route that answers with a view of one session computed from its records
 * (its channels, its state machines): a heavy request, `GET /sessions/{id}/...`, 422 past
 * the scan limit.
 */
export function sessionScanRoute<Q extends TObject, R extends TSchema>(route: {
  summary: string;
  description: string;
  querystring: Q;
  reply: R;
}) {
  const { summary, description, querystring, reply } = route;
  return {
    config: { heavy: true },
    schema: {
      summary,
      description,
      tags: ['sessions'],
      params: SessionParams,
      querystring,
      response: { 200: reply, ...problemResponses, 422: ProblemSchema },
    },
  };
}

/** How a view reads a session: the protocols it is for, and its reading within the scan budget. */
export interface SessionScan<T> {
  protocols: readonly string[];
  /** What a session of another protocol is told (a 400). */
  notFor(session: SessionRow): string;
  read(session: SessionRow, budget: ScanBudget): Promise<T>;
}

/**
 * Reads the view of session `id` within `scanLimitBytes` of records; the reply says how many
 * it read (`x-tracehub-scanned-bytes`).
 */
export async function scanSession<T extends object>(
  db: Kysely<Database>,
  id: string,
  scanLimitBytes: number,
  reply: FastifyReply,
  scan: SessionScan<T>,
): Promise<{ session: string } & T> {
  const session = await mustGetSession(db, id);
  if (!scan.protocols.includes(session.protocol)) throw httpErrors.badRequest(scan.notFor(session));
  const budget = new ScanBudget(scanLimitBytes);
  const view = await scan.read(session, budget);
  reply.header('x-tracehub-scanned-bytes', String(budget.scannedBytes));
  return { session: session.id, ...view };
}
