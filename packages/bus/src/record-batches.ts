import type { PubAck } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { Headers, msgId, type RecordBatch } from '@tracehub/contracts';
import type { Bus } from './connect.js';

/** Record batches above this size are split into parts so no message nears max_payload (1 MB). */
export const MAX_BATCH_PAYLOAD = 512 * 1024;

export const PART_HEADER = 'th-part';
export const PARTS_HEADER = 'th-parts';
/** How many records the message holds, so a consumer can size batches without parsing. */
export const RECORDS_HEADER = 'th-records';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Publishes the records decoded from one raw chunk to `rec.<protocol>.<rig>.<link>`, as one
 * message with id `<session>.<chunk>` or, when large, as parts `<session>.<chunk>.p<i>`.
 * The split depends only on the records, so a re-decode after a crash produces the same ids
 * and JetStream drops the repeats.
 */
export async function publishRecordBatch(bus: Bus, batch: RecordBatch): Promise<PubAck[]> {
  const subject = bus.names.recSubject(batch.protocol, batch.rig, batch.link);
  const parts = splitBatch(batch);
  const counts = parts.length === 1 ? [batch.records.length] : partCounts(batch);
  const acks: PubAck[] = [];
  for (let i = 0; i < parts.length; i++) {
    const h = natsHeaders();
    h.set(Headers.Session, batch.session);
    h.set(Headers.Chunk, String(batch.chunk));
    h.set(PART_HEADER, String(i));
    h.set(PARTS_HEADER, String(parts.length));
    h.set(RECORDS_HEADER, String(counts[i]));
    if (batch.eos && i === parts.length - 1) h.set(Headers.Eos, '1');
    const id = parts.length === 1 ? msgId(batch.session, batch.chunk) : `${msgId(batch.session, batch.chunk)}.p${i}`;
    acks.push(await bus.js.publish(subject, parts[i], { msgID: id, headers: h }));
  }
  return acks;
}

/** Records per part, cut the way `splitBatch` cuts. */
function partCounts(batch: RecordBatch): number[] {
  const counts: number[] = [];
  let n = 0;
  let size = 0;
  for (const r of batch.records) {
    const length = JSON.stringify(r).length;
    if (n > 0 && size + length + 1 > MAX_BATCH_PAYLOAD) {
      counts.push(n);
      n = 0;
      size = 0;
    }
    n++;
    size += length + 1;
  }
  counts.push(n);
  return counts;
}

function splitBatch(batch: RecordBatch): Uint8Array[] {
  const recordJson = batch.records.map((r) => JSON.stringify(r));
  const total = recordJson.reduce((n, r) => n + r.length + 1, 0);
  const envelope = (eos: boolean) => {
    const { records: _records, ...rest } = batch;
    return JSON.stringify({ ...rest, eos }).slice(0, -1);
  };
  if (total <= MAX_BATCH_PAYLOAD || recordJson.length <= 1) {
    return [encoder.encode(`${envelope(batch.eos)},"records":[${recordJson.join(',')}]}`)];
  }
  // Parts are cut by the records' sizes alone, so the same records always give the same parts.
  const groups: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const r of recordJson) {
    if (current.length > 0 && size + r.length + 1 > MAX_BATCH_PAYLOAD) {
      groups.push(current);
      current = [];
      size = 0;
    }
    current.push(r);
    size += r.length + 1;
  }
  groups.push(current);
  return groups.map((g, i) =>
    encoder.encode(`${envelope(batch.eos && i === groups.length - 1)},"records":[${g.join(',')}]}`),
  );
}

export function parseRecordBatch(data: Uint8Array): RecordBatch {
  return JSON.parse(decoder.decode(data)) as RecordBatch;
}
