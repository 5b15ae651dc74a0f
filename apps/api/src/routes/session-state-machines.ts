import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SessionStateMachines, StateMachinesQuery } from '@tracehub/api-contract';
import { type Database, sessionStateMachines } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { scanSession, sessionScanRoute } from './session-scan.js';

export interface SessionStateMachinesRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

/** A QS session's state machines: the session page's state-machine view. */
export const sessionStateMachinesRoutes: FastifyPluginAsyncTypebox<SessionStateMachinesRoutesOptions> = async (
  app,
  { db, scanLimitBytes },
) => {
  app.get(
    '/sessions/:id/state-machines',
    sessionScanRoute({
      summary: "A QS session's state machines: states and transitions seen, counted",
      description:
        "Per QS object with state-machine (QEP) records: its states (entries, exits, internal transitions, ignored and unhandled events, by signal) and the transitions seen between them, by kind and signal, with counts. The machine's initial transition is QS_QEP_INIT_TRAN's (`from` null); the same transition recorded as QS_QEP_STATE_INIT from the top state is not repeated. Adds up the counts each block keeps in its summary; reads the records only of blocks stored before blocks kept them that hold QEP records (of `obj`, when given); `x-tracehub-scanned-bytes` says how many bytes, and past `API_SCAN_LIMIT_MB` it is a 422. STP and SWD sessions have no state machines: 400.",
      querystring: StateMachinesQuery,
      reply: SessionStateMachines,
    }),
    async (request, reply) =>
      scanSession(db, request.params.id, scanLimitBytes, reply, {
        protocols: ['qs'],
        notFor: (session) => `session ${session.id} is ${session.protocol}: state machines are QS's (qs sessions)`,
        read: (session, budget) => sessionStateMachines(db, session.id, { obj: request.query.obj, budget }),
      }),
  );
};
