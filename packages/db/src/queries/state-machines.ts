import {
  addMachineTallies,
  type MachineTallies,
  type MachineTally,
  STATE_MACHINE_RECORD_NAMES,
  type TransitionKind,
  tallyMachineRecord,
  transitionOfKey,
} from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import { unpackMachines } from '../blocks/packed-column.js';
import type { Database } from '../database.js';
import { ScanBudget } from './block-reader.js';
import { forEachSessionRecord } from './session-blocks.js';
import { inOneSnapshot } from './snapshot.js';

/** One transition of a state machine as the records show it, counted. */
export interface TransitionCount {
  /** The state the transition leaves from; null for the machine's initial transition. */
  from: string | null;
  to: string;
  /** The signal that triggered it; null for initial transitions. */
  sig: string | null;
  kind: TransitionKind;
  count: number;
}

/** A signal and how often it was seen. */
export interface SignalCount {
  sig: string;
  count: number;
}

/** One state of a state machine and what happened in it. */
export interface StateCounts {
  name: string;
  /** QS_QEP_STATE_ENTRY and QS_QEP_STATE_EXIT records of the state. */
  entries: number;
  exits: number;
  /** Events the state handled without leaving (QS_QEP_INTERN_TRAN), by signal. */
  internal: SignalCount[];
  /** Events dispatched to the machine while it was in the state (QS_QEP_DISPATCH), by signal. */
  dispatched: SignalCount[];
  /** Events the machine ignored while in the state (QS_QEP_IGNORED), by signal. */
  ignored: SignalCount[];
  /** Events a guard of the state turned away (QS_QEP_UNHANDLED), by signal. */
  unhandled: SignalCount[];
}

/** An active object's (or any QEP object's) state machine: its states and transitions seen. */
export interface StateMachine {
  obj: string;
  /** QS_QEP_DISPATCH records: events dispatched to it. */
  dispatched: number;
  /** States by name; the machine's top state (left by its initial transitions only) is not one. */
  states: StateCounts[];
  /** Most frequent first. */
  transitions: TransitionCount[];
}

export interface SessionStateMachines {
  /** QEP records counted (those of the object asked for, with `obj`). */
  records: number;
  machines: StateMachine[];
}

export interface StateMachinesOptions {
  /** Only this object's machine. */
  obj?: string;
  /** What the query may read (default: `ScanBudget`'s default); over it, `ScanLimitError`. */
  budget?: ScanBudget;
}

/**
 * The machine as the page draws it, from its tally. QP records the initial transition of the
 * whole machine twice: as QS_QEP_STATE_INIT from the top state (a state no record enters,
 * leaves or acts in) and as QS_QEP_INIT_TRAN; only the latter is kept.
 */
function machineOf(obj: string, m: MachineTally): StateMachine {
  const states = new Map(Object.entries(m.states));
  const all = Object.entries(m.transitions).map(([key, count]) => ({ ...transitionOfKey(key), count }));
  const known = new Set(states.keys());
  for (const t of all) {
    if (t.kind !== 'state-initial' && t.from !== null) known.add(t.from);
    known.add(t.to);
  }
  const transitions = all
    .filter((t) => t.kind !== 'state-initial' || known.has(t.from!))
    .sort((a, b) => b.count - a.count || order(a, b));
  const empty = () => ({ entries: 0, exits: 0, internal: {}, dispatched: {}, ignored: {}, unhandled: {} });
  for (const t of transitions) {
    if (t.from !== null && !states.has(t.from)) states.set(t.from, empty());
    if (!states.has(t.to)) states.set(t.to, empty());
  }
  const counts = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([sig, count]) => ({ sig, count }))
      .sort((a, b) => b.count - a.count || (a.sig < b.sig ? -1 : 1));
  return {
    obj,
    dispatched: m.dispatched,
    states: [...states]
      .map(([name, s]) => ({
        name,
        entries: s.entries,
        exits: s.exits,
        internal: counts(s.internal),
        dispatched: counts(s.dispatched),
        ignored: counts(s.ignored),
        unhandled: counts(s.unhandled),
      }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    transitions,
  };
}

/** Transitions of equal count in a fixed order: kind, from, to, signal. */
function order(a: TransitionCount, b: TransitionCount): number {
  const ka = `${a.kind}\u0000${a.from ?? ''}\u0000${a.to}\u0000${a.sig ?? ''}`;
  const kb = `${b.kind}\u0000${b.from ?? ''}\u0000${b.to}\u0000${b.sig ?? ''}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/**
 * The state machines of a QS session's objects, from its QEP records: per object its states
 * (entries, exits, internal transitions, ignored and unhandled events, by signal) and the
 * transitions seen between them, by signal, counted. Blocks keep these counts in their
 * summary (`machines`), which are added up; only blocks written before they did, and whose
 * summary names a QEP record (of `obj`, when given), are decoded, under a budget, on one
 * snapshot.
 */
export async function sessionStateMachines(
  db: Kysely<Database>,
  session: string,
  opts: StateMachinesOptions = {},
): Promise<SessionStateMachines> {
  const tallies: MachineTallies = {};
  const wanted = (obj: string) => opts.obj === undefined || obj === opts.obj;
  await inOneSnapshot(db, async (snapshot) => {
    // Blocks that keep their machines' tallies: added up from the summaries alone.
    const summaries = await snapshot
      .selectFrom('record_blocks')
      .select('machines')
      .where('session', '=', session)
      .where('machines', 'is not', null)
      .execute();
    for (const row of summaries) {
      if (row.machines === null) continue;
      const machines = unpackMachines(row.machines);
      for (const obj in machines) if (wanted(obj)) addMachineTallies(tallies, { [obj]: machines[obj] });
    }
    // Blocks written before blocks kept tallies: their QEP records are read.
    await forEachSessionRecord(
      snapshot,
      session,
      opts.budget ?? new ScanBudget(),
      (r) => {
        if (r.qs?.obj !== undefined && wanted(r.qs.obj)) tallyMachineRecord(tallies, r);
      },
      (blocks) => {
        const qepBlocks = blocks
          .where('machines', 'is', null)
          .where(sql<boolean>`names && ${STATE_MACHINE_RECORD_NAMES}::text[]`);
        return opts.obj === undefined ? qepBlocks : qepBlocks.where(sql<boolean>`${opts.obj} = any(objs)`);
      },
    );
  });
  const machines = Object.entries(tallies).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    records: machines.reduce((n, [, m]) => n + m.records, 0),
    machines: machines.map(([obj, m]) => machineOf(obj, m)),
  };
}
