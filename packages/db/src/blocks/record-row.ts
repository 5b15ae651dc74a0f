import type { TraceRecord } from '@tracehub/contracts';

/**
 * A stored record as the read queries return it: one field per property of the record, with
 * the types Postgres columns would have (exact `bigint` clocks, bytes as a Buffer). It is
 * what `records` rows were before records moved into blocks, so readers did not change.
 */
export interface RecordRow {
  session: string;
  seq: bigint;
  /** `host_ns` as an instant, truncated to the µs (a Date keeps the ms). */
  host_time: Date;
  /** Exact receive time in ns since the Unix epoch. */
  host_ns: bigint;
  rig: string;
  link: string;
  protocol: string;
  chunk: number;
  target_ts: string | null;
  /** Target time in ticks of the record's segment (`targetTime`); null when it has none. */
  target_time: string | null;
  target_segment: number | null;
  kind: string;
  type: number;
  name: string;
  qs_obj: string | null;
  qs_sig: string | null;
  qs_prio: number | null;
  stp_master: number | null;
  stp_channel: number | null;
  fields: Record<string, unknown>;
  text: string;
  raw: Buffer;
}

/** A decoded block record as a row. */
export function recordToRow(r: TraceRecord): RecordRow {
  const hostNs = BigInt(r.hostNs);
  return {
    session: r.session,
    seq: BigInt(r.seq),
    host_time: new Date(Number(hostNs / 1_000_000n)),
    host_ns: hostNs,
    rig: r.rig,
    link: r.link,
    protocol: r.protocol,
    chunk: r.chunk,
    target_ts: r.targetTs,
    target_time: r.targetTime ?? null,
    target_segment: r.targetSegment ?? null,
    kind: r.kind,
    type: r.type,
    name: r.name,
    qs_obj: r.qs?.obj ?? null,
    qs_sig: r.qs?.sig ?? null,
    qs_prio: r.qs?.prio ?? null,
    stp_master: r.stp?.master ?? null,
    stp_channel: r.stp?.channel ?? null,
    fields: r.fields,
    text: r.text,
    raw: Buffer.from(r.raw, 'base64'),
  };
}

/** A row as the TraceRecord it was. */
export function rowToTraceRecord(row: RecordRow): TraceRecord {
  const record: TraceRecord = {
    rig: row.rig,
    link: row.link,
    session: row.session,
    seq: Number(row.seq),
    chunk: row.chunk,
    protocol: row.protocol as TraceRecord['protocol'],
    hostNs: row.host_ns.toString(),
    targetTs: row.target_ts,
    kind: row.kind as TraceRecord['kind'],
    type: row.type,
    name: row.name,
    fields: row.fields,
    text: row.text,
    raw: Buffer.from(row.raw).toString('base64'),
  };
  const qs: NonNullable<TraceRecord['qs']> = {};
  if (row.qs_obj !== null) qs.obj = row.qs_obj;
  if (row.qs_sig !== null) qs.sig = row.qs_sig;
  if (row.qs_prio !== null) qs.prio = row.qs_prio;
  if (Object.keys(qs).length > 0) record.qs = qs;
  if (row.stp_master !== null && row.stp_channel !== null)
    record.stp = { master: row.stp_master, channel: row.stp_channel };
  // As decoders write them: each only where it says more than the stamp (`targetTimeOf`).
  if (row.target_time !== null) record.targetTime = row.target_time;
  if (row.target_segment) record.targetSegment = row.target_segment;
  return record;
}
