import type { TraceRecord } from '@tracehub/contracts';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../database.js';
import { intArrayLiteral as ints, textArrayLiteral as texts } from './pg-array.js';

/**
 * Inserts a batch of records in one statement and returns how many were new. Idempotent on
 * the key (session, seq, host_time): a record seen again (JetStream re-delivery) is skipped.
 *
 * The batch goes to Postgres as one typed array per column and comes back as rows through
 * `unnest`, so the statement and its plan are the same for any batch size and every value
 * is a bind parameter (each column's array goes as one array literal). `host_time` is `hostNs` truncated to the microsecond; `raw` arrives as
 * base64 and is decoded by the server.
 */
export async function insertRecords(db: Kysely<Database>, records: readonly TraceRecord[]): Promise<number> {
  const n = records.length;
  if (n === 0) return 0;
  const session = new Array<string>(n);
  const seq = new Array<number>(n);
  const hostNs = new Array<string>(n);
  const rig = new Array<string>(n);
  const link = new Array<string>(n);
  const protocol = new Array<string>(n);
  const chunk = new Array<number>(n);
  const targetTs = new Array<string | null>(n);
  const kind = new Array<string>(n);
  const type = new Array<number>(n);
  const name = new Array<string>(n);
  const qsObj = new Array<string | null>(n);
  const qsSig = new Array<string | null>(n);
  const qsPrio = new Array<number | null>(n);
  const stpMaster = new Array<number | null>(n);
  const stpChannel = new Array<number | null>(n);
  const fields = new Array<string>(n);
  const text = new Array<string>(n);
  const raw = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const r = records[i];
    session[i] = r.session;
    seq[i] = r.seq;
    hostNs[i] = r.hostNs;
    rig[i] = r.rig;
    link[i] = r.link;
    protocol[i] = r.protocol;
    chunk[i] = r.chunk;
    targetTs[i] = r.targetTs;
    kind[i] = r.kind;
    type[i] = r.type;
    name[i] = r.name;
    qsObj[i] = r.qs?.obj ?? null;
    qsSig[i] = r.qs?.sig ?? null;
    qsPrio[i] = r.qs?.prio ?? null;
    stpMaster[i] = r.stp?.master ?? null;
    stpChannel[i] = r.stp?.channel ?? null;
    fields[i] = JSON.stringify(r.fields);
    text[i] = r.text;
    raw[i] = r.raw;
  }
  const result = await sql`
    insert into records (session, seq, host_time, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name,
                         qs_obj, qs_sig, qs_prio, stp_master, stp_channel, fields, text, raw)
    select session, seq, timestamptz 'epoch' + (host_ns / 1000) * interval '1 microsecond', host_ns, rig, link,
           protocol, chunk, target_ts, kind, type, name, qs_obj, qs_sig, qs_prio, stp_master, stp_channel, fields,
           text, decode(raw, 'base64')
    from unnest(
      ${texts(session)}::text[], ${ints(seq)}::bigint[], ${texts(hostNs)}::bigint[], ${texts(rig)}::text[],
      ${texts(link)}::text[], ${texts(protocol)}::text[], ${ints(chunk)}::int[], ${texts(targetTs)}::numeric[],
      ${texts(kind)}::text[], ${ints(type)}::int[], ${texts(name)}::text[], ${texts(qsObj)}::text[],
      ${texts(qsSig)}::text[], ${ints(qsPrio)}::int[], ${ints(stpMaster)}::int[], ${ints(stpChannel)}::int[],
      ${texts(fields)}::jsonb[], ${texts(text)}::text[], ${texts(raw)}::text[]
    ) as r(session, seq, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name, qs_obj, qs_sig, qs_prio,
           stp_master, stp_channel, fields, text, raw)
    on conflict do nothing`.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** The `host_time` Postgres stores for a record's `hostNs`: the instant, truncated to the µs. */
export function hostTimeOf(hostNs: string): { date: Date; micros: bigint } {
  const micros = BigInt(hostNs) / 1000n;
  return { date: new Date(Number(micros / 1000n)), micros };
}
