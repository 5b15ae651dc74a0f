import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { TRANSITION_RECORD_NAMES } from '@tracehub/contracts/record-names';
import { type Database, sessionStateMachines } from '@tracehub/db';
import type { Kysely } from 'kysely';
import { NO_NUL } from '../schemas.js';
import { scanSession, sessionScanRoute } from './session-scan.js';

export interface SessionStateMachinesRoutesOptions {
  db: Kysely<Database>;
  scanLimitBytes: number;
}

const SignalCounts = (description: string) =>
  Type.Array(Type.Object({ sig: Type.String(), count: Type.Integer() }), { description });

const State = Type.Object({
  name: Type.String(),
  entries: Type.Integer({ description: 'QS_QEP_STATE_ENTRY records of the state' }),
  exits: Type.Integer({ description: 'QS_QEP_STATE_EXIT records of the state' }),
  internal: SignalCounts('internal transitions (QS_QEP_INTERN_TRAN) by signal, most frequent first'),
  ignored: SignalCounts('events ignored in the state (QS_QEP_IGNORED) by signal'),
  unhandled: SignalCounts('events a guard of the state turned away (QS_QEP_UNHANDLED) by signal'),
});

const Transition = Type.Object({
  from: Type.Union([Type.String(), Type.Null()], {
    description: "the state left; null for the machine's initial transition",
  }),
  to: Type.String(),
  sig: Type.Union([Type.String(), Type.Null()], { description: 'the triggering signal; null for initial transitions' }),
  kind: Type.Union(
    Object.keys(TRANSITION_RECORD_NAMES).map((k) => Type.Literal(k)),
    {
      description:
        'QS_QEP_INIT_TRAN, QS_QEP_STATE_INIT (a composite state drilling down), QS_QEP_TRAN, QS_QEP_TRAN_HIST, _EP, _XP',
    },
  ),
  count: Type.Integer(),
});

const Machine = Type.Object({
  obj: Type.String(),
  dispatched: Type.Integer({ description: 'events dispatched to the object (QS_QEP_DISPATCH)' }),
  states: Type.Array(State, { description: 'by name' }),
  transitions: Type.Array(Transition, { description: 'most frequent first' }),
});

const StateMachinesReply = Type.Object({
  session: Type.String(),
  records: Type.Integer({ description: 'QEP records counted' }),
  machines: Type.Array(Machine, { description: 'by object name' }),
});

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
        "Per QS object with state-machine (QEP) records: its states (entries, exits, internal transitions, ignored and unhandled events, by signal) and the transitions seen between them, by kind and signal, with counts. The machine's initial transition is QS_QEP_INIT_TRAN's (`from` null); the same transition recorded as QS_QEP_STATE_INIT from the top state is not repeated. Reads the blocks of the session that hold QEP records (of `obj`, when given); `x-tracehub-scanned-bytes` says how many bytes, and past `API_SCAN_LIMIT_MB` it is a 422. STP and SWD sessions have no state machines: 400.",
      querystring: Type.Object({
        obj: Type.Optional(
          Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'only this QS object' }),
        ),
      }),
      reply: StateMachinesReply,
    }),
    async (request, reply) =>
      scanSession(db, request.params.id, scanLimitBytes, reply, {
        protocols: ['qs'],
        notFor: (session) => `session ${session.id} is ${session.protocol}: state machines are QS's (qs sessions)`,
        read: (session, budget) => sessionStateMachines(db, session.id, { obj: request.query.obj, budget }),
      }),
  );
};
