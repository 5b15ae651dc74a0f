import type { RecordRow } from '@tracehub/db';

/**
 * A Chrome JSON trace (the trace event format that ui.perfetto.dev and chrome://tracing open)
 * of stored records, streamed:
 * - one process per link session, one track (thread) per QS active object or STP
 *   master/channel, and one for the link itself (user records, errors, the rest);
 * - each state an active object was in is a slice ("X") from the transition into it to the
 *   transition out of it (or the end of the trace);
 * - events are instants ("i"): dispatches, posts, publishes, time events, user records,
 *   STP messages, and errors;
 * - counters ("C"): each active object's free queue entries and each event pool's free blocks.
 * Time is the target's time when records carry one: their stamps unwrapped across counter wraps
 * (the decoder's `targetTime`), each target segment after a reset placed just after the one
 * before it, in real µs by the link's tick rate when it is known (else ticks, shown as µs); the
 * host receive time for records without one.
 */

type TraceEvent = Record<string, unknown>;

/** QS records that belong to the active object in their `obj` field. */
const AO_RECORD = /^QS_(QEP_|QF_ACTIVE_)/;
const TRANSITIONS = new Set(['QS_QEP_TRAN', 'QS_QEP_TRAN_HIST', 'QS_QEP_TRAN_EP', 'QS_QEP_TRAN_XP']);
const INSTANTS = new Set([
  'QS_QEP_DISPATCH',
  'QS_QEP_INTERN_TRAN',
  'QS_QEP_IGNORED',
  'QS_QEP_UNHANDLED',
  'QS_QF_ACTIVE_POST',
  'QS_QF_ACTIVE_POST_LIFO',
  'QS_QF_PUBLISH',
  'QS_QF_TIMEEVT_POST',
]);

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The track a record belongs on: its active object, its STP master/channel, or null (the link's own). */
export function trackOf(
  row: Pick<RecordRow, 'protocol' | 'name' | 'qs_obj' | 'stp_master' | 'stp_channel' | 'fields'>,
): string | null {
  if (row.protocol === 'qs') {
    if (AO_RECORD.test(row.name)) return row.qs_obj;
    if (row.name.startsWith('QS_QF_TIMEEVT_')) return str(row.fields.ao) ?? null;
    return null;
  }
  if (row.stp_master !== null && row.stp_channel !== null)
    return `master ${row.stp_master} / channel ${row.stp_channel}`;
  return null;
}

/**
 * A session's target time as one growing count of ticks: the decoder's unwrapped time, each
 * segment (after a target reset, where the clock starts again) offset past the end of the one
 * before; records without a stamp are at the last one's time.
 */
class TargetClock {
  private last: bigint | undefined;
  private segment = 0;
  private offset = 0n;
  at(row: Pick<RecordRow, 'target_ts' | 'target_time' | 'target_segment'>): bigint | undefined {
    const ticks = row.target_time ?? row.target_ts;
    if (ticks === null) return this.last;
    const segment = row.target_segment ?? 0;
    if (segment !== this.segment && this.last !== undefined) {
      this.segment = segment;
      this.offset = this.last + 1n - BigInt(ticks);
    }
    this.last = BigInt(ticks) + this.offset;
    return this.last;
  }
}

/** The tick rate (ticks per second) of a session's link; null when it has none. */
export type TickRateOf = (session: string) => Promise<number | null>;

interface Process {
  pid: number;
  clock: TargetClock;
  /** µs per tick, or 1 when the tick rate is not known. */
  usPerTick: number;
  tracks: Map<string | null, number>;
  /** The state each active object is in, since when. */
  states: Map<number, { name: string; since: number; seq: number }>;
}

export async function* perfettoChunks(
  rows: AsyncIterable<RecordRow>,
  tickRateOf: TickRateOf = async () => null,
): AsyncGenerator<Buffer> {
  const processes = new Map<string, Process>();
  let out: string[] = [];
  let size = 0;
  let first = true;
  let lastTs = 0;
  const emit = (e: TraceEvent) => {
    const text = JSON.stringify(e);
    out.push(first ? text : `,\n${text}`);
    first = false;
    size += text.length;
  };
  const flush = () => {
    const buf = Buffer.from(out.join(''), 'utf8');
    out = [];
    size = 0;
    return buf;
  };
  const processOf = async (row: RecordRow) => {
    let p = processes.get(row.session);
    if (!p) {
      const rate = await tickRateOf(row.session);
      p = {
        pid: processes.size + 1,
        clock: new TargetClock(),
        usPerTick: rate === null ? 1 : 1e6 / rate,
        tracks: new Map(),
        states: new Map(),
      };
      processes.set(row.session, p);
      emit({ ph: 'M', name: 'process_name', pid: p.pid, args: { name: `${row.rig}/${row.link} ${row.session}` } });
    }
    return p;
  };
  const trackId = (p: Process, track: string | null, label: string) => {
    let tid = p.tracks.get(track);
    if (tid === undefined) {
      tid = p.tracks.size + 1;
      p.tracks.set(track, tid);
      emit({ ph: 'M', name: 'thread_name', pid: p.pid, tid, args: { name: track ?? label } });
      emit({ ph: 'M', name: 'thread_sort_index', pid: p.pid, tid, args: { sort_index: track === null ? 0 : tid } });
    }
    return tid;
  };
  const closeState = (p: Process, tid: number, at: number) => {
    const s = p.states.get(tid);
    if (!s) return;
    emit({
      ph: 'X',
      cat: 'state',
      name: s.name,
      pid: p.pid,
      tid,
      ts: s.since,
      dur: Math.max(0, at - s.since),
      args: { seq: s.seq },
    });
    p.states.delete(tid);
  };

  yield Buffer.from('{"displayTimeUnit":"ns","traceEvents":[\n');
  for await (const row of rows) {
    if (row.kind === 'dict') continue;
    const p = await processOf(row);
    const target = p.clock.at(row);
    // µs: target ticks by the tick rate (as they are without one), or host ns / 1000.
    const ts = target !== undefined ? Number(target) * p.usPerTick : Number(row.host_ns / 1000n);
    lastTs = Math.max(lastTs, ts);
    const track = trackOf(row);
    const tid = trackId(p, track, `${row.link} (link)`);
    const f = row.fields;
    const args = { seq: Number(row.seq), text: row.text };
    if (row.name === 'QS_QEP_INIT_TRAN' || TRANSITIONS.has(row.name)) {
      const state = row.name === 'QS_QEP_INIT_TRAN' ? (str(f.state) ?? str(f.target)) : str(f.target);
      if (state) {
        closeState(p, tid, ts);
        p.states.set(tid, { name: state, since: ts, seq: Number(row.seq) });
      }
      continue;
    }
    if (row.kind === 'error') {
      emit({ ph: 'i', s: 't', cat: 'error', name: row.name, pid: p.pid, tid, ts, args });
      continue;
    }
    if (row.protocol === 'qs') {
      if (INSTANTS.has(row.name)) {
        const sig = str(f.sig);
        emit({
          ph: 'i',
          s: 't',
          cat: 'event',
          name: `${row.name.replace(/^QS_(QEP_|QF_)/, '')}${sig ? ` ${sig}` : ''}`,
          pid: p.pid,
          tid,
          ts,
          args,
        });
      } else if (track === null && row.kind === 'record' && !row.name.startsWith('QS_')) {
        emit({ ph: 'i', s: 't', cat: 'user', name: row.name, pid: p.pid, tid, ts, args });
      }
      if ((row.name === 'QS_QF_ACTIVE_POST' || row.name === 'QS_QF_ACTIVE_GET') && typeof f.free === 'number' && track)
        emit({ ph: 'C', name: `${track} queue free`, pid: p.pid, ts, args: { free: f.free } });
      if ((row.name === 'QS_QF_MPOOL_GET' || row.name === 'QS_QF_MPOOL_PUT') && typeof f.free === 'number')
        emit({ ph: 'C', name: `${str(f.obj) ?? 'pool'} free`, pid: p.pid, ts, args: { free: f.free } });
    } else if (row.kind === 'record') {
      emit({ ph: 'i', s: 't', cat: 'message', name: row.name, pid: p.pid, tid, ts, args });
    }
    if (size >= 65_536) yield flush();
  }
  for (const p of processes.values()) for (const tid of [...p.states.keys()]) closeState(p, tid, lastTs);
  if (out.length > 0) yield flush();
  yield Buffer.from('\n]}\n');
}
