import type { RecordRow } from '@tracehub/db';

/** One arrow or state change of a sequence diagram, in record order. */
export type SequenceStep =
  | {
      kind: 'post' | 'publish' | 'timeout';
      seq: number;
      targetTs: string | null;
      from: string;
      to: string;
      sig: string;
    }
  | {
      kind: 'state';
      seq: number;
      targetTs: string | null;
      obj: string;
      /** QS_QEP_TRAN: source -> target; QS_QEP_INIT_TRAN / STATE_INIT: -> target. */
      from: string | null;
      to: string;
      sig: string | null;
    };

export interface SequenceDiagram {
  /** Lifelines, in order of first appearance. */
  participants: string[];
  steps: SequenceStep[];
  /** Stopped at the step limit: more of the session was not drawn. */
  truncated: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The events exchanged between active objects (QS AO posts, publishes fanned out to the
 * subscribers known so far, time-event posts) and each object's state changes, read from a
 * QS session's records. Everything needed is in the records' fields: QS names objects,
 * signals and states through the session's dictionaries.
 */
export async function sequenceDiagram(rows: AsyncIterable<RecordRow>, maxSteps: number): Promise<SequenceDiagram> {
  const participants: string[] = [];
  const seen = new Set<string>();
  const subscribers = new Map<string, string[]>();
  const steps: SequenceStep[] = [];
  const lane = (name: string) => {
    if (!seen.has(name)) {
      seen.add(name);
      participants.push(name);
    }
    return name;
  };
  const push = (step: SequenceStep) => {
    if (steps.length >= maxSteps) return false;
    steps.push(step);
    return true;
  };
  for await (const row of rows) {
    if (row.protocol !== 'qs' || row.kind !== 'record') continue;
    const f = row.fields;
    const base = { seq: Number(row.seq), targetTs: row.target_ts };
    let ok = true;
    switch (row.name) {
      case 'QS_QF_ACTIVE_SUBSCRIBE': {
        const obj = str(f.obj);
        const sig = str(f.sig);
        if (obj && sig) {
          const list = subscribers.get(sig) ?? [];
          if (!list.includes(obj)) list.push(obj);
          subscribers.set(sig, list);
        }
        break;
      }
      case 'QS_QF_ACTIVE_UNSUBSCRIBE': {
        const sig = str(f.sig);
        const list = sig ? subscribers.get(sig) : undefined;
        if (list)
          subscribers.set(
            sig!,
            list.filter((o) => o !== f.obj),
          );
        break;
      }
      case 'QS_QF_ACTIVE_POST':
      case 'QS_QF_ACTIVE_POST_LIFO': {
        const from = str(f.sender) ?? 'NULL';
        const to = str(f.obj);
        if (to) ok = push({ kind: 'post', ...base, from: lane(from), to: lane(to), sig: str(f.sig) ?? '?' });
        break;
      }
      case 'QS_QF_PUBLISH': {
        const from = str(f.sender) ?? 'NULL';
        const sig = str(f.sig) ?? '?';
        lane(from);
        for (const to of subscribers.get(sig) ?? []) {
          if (!(ok = push({ kind: 'publish', ...base, from, to: lane(to), sig }))) break;
        }
        break;
      }
      case 'QS_QF_TIMEEVT_POST': {
        const to = str(f.ao);
        const from = str(f.obj) ?? 'timer';
        if (to) ok = push({ kind: 'timeout', ...base, from: lane(from), to: lane(to), sig: str(f.sig) ?? '?' });
        break;
      }
      case 'QS_QEP_TRAN':
      case 'QS_QEP_TRAN_HIST':
      case 'QS_QEP_TRAN_EP':
      case 'QS_QEP_TRAN_XP': {
        const obj = str(f.obj);
        const to = str(f.target);
        if (obj && to)
          ok = push({
            kind: 'state',
            ...base,
            obj: lane(obj),
            from: str(f.source) ?? null,
            to,
            sig: str(f.sig) ?? null,
          });
        break;
      }
      case 'QS_QEP_INIT_TRAN':
      case 'QS_QEP_STATE_INIT': {
        const obj = str(f.obj);
        const to = str(f.target) ?? str(f.state);
        if (obj && to) ok = push({ kind: 'state', ...base, obj: lane(obj), from: null, to, sig: null });
        break;
      }
    }
    if (!ok) return { participants, steps, truncated: true };
  }
  return { participants, steps, truncated: false };
}
