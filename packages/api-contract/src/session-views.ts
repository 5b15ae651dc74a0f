import { type Static, Type } from '@sinclair/typebox';
import { TRANSITION_RECORD_NAMES, type TransitionKind } from '@tracehub/contracts/record-names';
import { NO_NUL, NsText } from './common.js';

const Ns = NsText('host receive time, ns since the Unix epoch');

/** One STP channel of a master. */
export const StpChannel = Type.Object({
  channel: Type.Integer(),
  records: Type.Integer(),
  errors: Type.Integer({
    description: 'error records on the channel (a message discarded, left open at the end, ...)',
  }),
  firstHostNs: Ns,
  lastHostNs: Ns,
  names: Type.Array(Type.String(), { description: 'record names seen on the channel, sorted' }),
});
export type StpChannel = Static<typeof StpChannel>;

export const StpMaster = Type.Object({
  master: Type.Integer(),
  records: Type.Integer(),
  errors: Type.Integer(),
  channels: Type.Array(StpChannel, { description: 'by channel number' }),
});
export type StpMaster = Static<typeof StpMaster>;

/** `GET /sessions/{id}/channels`: an STP session's masters and channels. */
export const SessionChannels = Type.Object({
  session: Type.String(),
  records: Type.Integer({ description: 'records of the session, addressed or not' }),
  unaddressed: Type.Integer({ description: 'records on no master/channel (markers, stream errors)' }),
  masters: Type.Array(StpMaster, { description: 'by master number' }),
  errors: Type.Array(Type.Object({ name: Type.String(), count: Type.Integer() }), {
    description: 'error records by name, most frequent first',
  }),
});
export type SessionChannels = Static<typeof SessionChannels>;

export const SignalCount = Type.Object({ sig: Type.String(), count: Type.Integer() });
export type SignalCount = Static<typeof SignalCount>;
const SignalCounts = (description: string) => Type.Array(SignalCount, { description });

/** A state of a state machine, counted. */
export const StateCounts = Type.Object({
  name: Type.String(),
  entries: Type.Integer({ description: 'QS_QEP_STATE_ENTRY records of the state' }),
  dispatched: SignalCounts('events dispatched to the machine while in the state (QS_QEP_DISPATCH) by signal'),
  exits: Type.Integer({ description: 'QS_QEP_STATE_EXIT records of the state' }),
  internal: SignalCounts('internal transitions (QS_QEP_INTERN_TRAN) by signal, most frequent first'),
  ignored: SignalCounts('events ignored in the state (QS_QEP_IGNORED) by signal'),
  unhandled: SignalCounts('events a guard of the state turned away (QS_QEP_UNHANDLED) by signal'),
});
export type StateCounts = Static<typeof StateCounts>;

/** A transition seen between two states, counted. */
export const TransitionCount = Type.Object({
  from: Type.Union([Type.String(), Type.Null()], {
    description: "the state left; null for the machine's initial transition",
  }),
  to: Type.String(),
  sig: Type.Union([Type.String(), Type.Null()], { description: 'the triggering signal; null for initial transitions' }),
  kind: Type.Union(
    (Object.keys(TRANSITION_RECORD_NAMES) as TransitionKind[]).map((k) => Type.Literal(k)),
    {
      description:
        'QS_QEP_INIT_TRAN, QS_QEP_STATE_INIT (a composite state drilling down), QS_QEP_TRAN, QS_QEP_TRAN_HIST, _EP, _XP',
    },
  ),
  count: Type.Integer(),
});
export type TransitionCount = Static<typeof TransitionCount>;

export const StateMachine = Type.Object({
  obj: Type.String(),
  dispatched: Type.Integer({ description: 'events dispatched to the object (QS_QEP_DISPATCH)' }),
  states: Type.Array(StateCounts, { description: 'by name' }),
  transitions: Type.Array(TransitionCount, { description: 'most frequent first' }),
});
export type StateMachine = Static<typeof StateMachine>;

export const StateMachinesQuery = Type.Object({
  obj: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'only this QS object' }),
  ),
});

/** `GET /sessions/{id}/state-machines`: a QS session's state machines. */
export const SessionStateMachines = Type.Object({
  session: Type.String(),
  records: Type.Integer({ description: 'QEP records counted' }),
  machines: Type.Array(StateMachine, { description: 'by object name' }),
});
export type SessionStateMachines = Static<typeof SessionStateMachines>;

/** Records of a session storage could not store, one entry per message. */
export const RecordLoss = Type.Object({
  chunk: Type.Integer({ description: 'the raw chunk whose records they were' }),
  firstSeq: Type.Union([Type.Integer(), Type.Null()]),
  lastSeq: Type.Union([Type.Integer(), Type.Null()]),
  records: Type.Integer(),
  reason: Type.String({ description: 'what Postgres (or the reader) said was wrong with them' }),
  lostAt: Type.String({ format: 'date-time' }),
});
export type RecordLoss = Static<typeof RecordLoss>;

/** `GET /sessions/{id}/losses`. */
export const SessionLosses = Type.Object({ losses: Type.Array(RecordLoss) });
export type SessionLosses = Static<typeof SessionLosses>;
