import type { TraceRecord } from '@tracehub/contracts';
import { T0 } from './time-zero.js';

/**
 * A QS_QEP_TRAN record of Philo_inst[0] on TIMEOUT_SIG as a decoder publishes it: record `seq`
 * of `place.session` on `place.rig`/`place.link`, one a chunk, received `seq` µs after `T0`;
 * `over` sets what a test looks at.
 */
export function transitionRecord(
  place: Pick<TraceRecord, 'rig' | 'link' | 'session'>,
  seq: number,
  over: Partial<TraceRecord> = {},
): TraceRecord {
  return {
    ...place,
    seq,
    chunk: seq,
    protocol: 'qs',
    hostNs: (T0 + BigInt(seq) * 1000n).toString(),
    targetTs: String(seq * 10_000),
    kind: 'record',
    type: 6,
    name: 'QS_QEP_TRAN',
    qs: { obj: 'Philo_inst[0]', sig: 'TIMEOUT_SIG', prio: 1 },
    fields: {},
    text: `record ${seq}`,
    raw: '',
    ...over,
  };
}
