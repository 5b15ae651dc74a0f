import type { RecordBatch, TraceRecord } from '@tracehub/contracts';

/**
 * The batch a decoder publishes for `records` of one link session, decoded from raw chunk
 * `chunk`: protocol, rig, link, session and receive time are the first record's.
 */
export function recordBatchOf(records: TraceRecord[], chunk: number): RecordBatch {
  const [first] = records;
  return {
    protocol: first.protocol,
    rig: first.rig,
    link: first.link,
    session: first.session,
    chunk,
    hostNs: first.hostNs,
    eos: false,
    records,
  };
}
