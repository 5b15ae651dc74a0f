import type { SequenceReply, SequenceStep } from '@tracehub/api-contract';
import type { RecordRow } from '@tracehub/db';

export type { SequenceStep };

/** A page of a sequence diagram: `GET /sessions/{id}/sequence` without the session's id. */
export type SequenceDiagram = Omit<SequenceReply, 'session'>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const POSTS = new Set(['QS_QF_ACTIVE_POST', 'QS_QF_ACTIVE_POST_LIFO']);

/**
 * The events exchanged between active objects and each object's state changes, read from a
 * QS session's records, each drawn once:
 * - a publish is one fan-out step; the AO-Posts QF emits right after it for the same signal
 *   are its deliveries, not arrows of their own;
 * - a time event is one step from the ticker that posted it (the sender of the AO-Post that
 *   follows the TE-Post) to its active object;
 * - an initial transition is its QS_QEP_INIT_TRAN; the St-Init records of the same descent
 *   (one per nesting level) are not drawn again.
 * Everything needed is in the records' fields: QS names objects, signals and states through
 * the session's dictionaries. `after` starts after that seq (paging), at most `maxSteps`.
 */
export async function sequenceDiagram(
  rows: AsyncIterable<RecordRow>,
  maxSteps: number,
  after = -1,
): Promise<SequenceDiagram> {
  const steps: SequenceStep[] = [];
  // What the next records may deliver: the publish or time event just seen.
  let publish: Extract<SequenceStep, { kind: 'publish' }> | undefined;
  let timeout: Extract<SequenceStep, { kind: 'timeout' }> | undefined;
  let full = false;
  let lastSeq = after;
  for await (const row of rows) {
    if (row.protocol !== 'qs' || row.kind !== 'record') continue;
    const seq = Number(row.seq);
    if (seq <= after) continue;
    const f = row.fields;
    if (POSTS.has(row.name)) {
      const to = str(f.obj);
      const sig = str(f.sig) ?? '?';
      if (publish && to && sig === publish.sig) {
        publish.deliveries.push({ to, seq });
        lastSeq = seq;
        continue;
      }
      if (timeout && timeout.deliverySeq === null && to === timeout.to && sig === timeout.sig) {
        timeout.deliverySeq = seq;
        const sender = str(f.sender);
        if (sender) timeout.from = sender;
        lastSeq = seq;
        timeout = undefined;
        continue;
      }
    }
    // Any other record ends what a publish or time event may still deliver.
    publish = undefined;
    timeout = undefined;
    const step = stepOf(row, seq);
    if (!step) continue;
    if (steps.length >= maxSteps) {
      full = true;
      break;
    }
    steps.push(step);
    lastSeq = seq;
    if (step.kind === 'publish') publish = step;
    else if (step.kind === 'timeout') timeout = step;
  }
  const participants: string[] = [];
  const seen = new Set<string>();
  const lane = (name: string | null) => {
    if (name !== null && !seen.has(name)) {
      seen.add(name);
      participants.push(name);
    }
  };
  for (const s of steps) {
    if (s.kind === 'state') lane(s.obj);
    else if (s.kind === 'publish') {
      lane(s.from);
      for (const d of s.deliveries) lane(d.to);
    } else {
      lane(s.from);
      lane(s.to);
    }
  }
  return { participants, steps, truncated: full, nextAfter: full ? lastSeq : null };
}

/** The step a record starts, if it starts one. */
function stepOf(row: RecordRow, seq: number): SequenceStep | undefined {
  const f = row.fields;
  const base = { seq, targetTs: row.target_ts, hostNs: row.host_ns.toString() };
  switch (row.name) {
    case 'QS_QF_ACTIVE_POST':
    case 'QS_QF_ACTIVE_POST_LIFO': {
      const to = str(f.obj);
      return to ? { kind: 'post', ...base, from: str(f.sender) ?? 'NULL', to, sig: str(f.sig) ?? '?' } : undefined;
    }
    case 'QS_QF_PUBLISH':
      return { kind: 'publish', ...base, from: str(f.sender) ?? 'NULL', sig: str(f.sig) ?? '?', deliveries: [] };
    case 'QS_QF_TIMEEVT_POST': {
      const to = str(f.ao);
      return to
        ? { kind: 'timeout', ...base, from: str(f.obj) ?? 'timer', to, sig: str(f.sig) ?? '?', deliverySeq: null }
        : undefined;
    }
    case 'QS_QEP_TRAN':
    case 'QS_QEP_TRAN_HIST':
    case 'QS_QEP_TRAN_EP':
    case 'QS_QEP_TRAN_XP': {
      const obj = str(f.obj);
      const to = str(f.target);
      return obj && to
        ? { kind: 'state', ...base, obj, from: str(f.source) ?? null, to, sig: str(f.sig) ?? null }
        : undefined;
    }
    case 'QS_QEP_INIT_TRAN': {
      const obj = str(f.obj);
      const to = str(f.state) ?? str(f.target);
      return obj && to ? { kind: 'state', ...base, obj, from: null, to, sig: null } : undefined;
    }
  }
  return undefined;
}
