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
/** How many of them are error records. */
export const ERRORS_HEADER = 'th-errors';

const encoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Publishes the records decoded from one raw chunk to `rec.<protocol>.<rig>.<link>`, as one
 * message with id `<session>.<chunk>` or, when large, as parts `<session>.<chunk>.p<i>`.
 * The split depends only on the records, so a re-decode after a crash produces the same ids
 * and JetStream drops the repeats. Headers say how many records (and error records) each
 * message holds, so consumers that only count need not parse.
 */
export async function publishRecordBatch(bus: Bus, batch: RecordBatch): Promise<PubAck[]> {
  const subject = bus.names.recSubject(batch.protocol, batch.rig, batch.link);
  const parts = splitBatch(batch);
  const acks: PubAck[] = [];
  for (let i = 0; i < parts.length; i++) {
    const h = natsHeaders();
    h.set(Headers.Session, batch.session);
    h.set(Headers.Chunk, String(batch.chunk));
    h.set(PART_HEADER, String(i));
    h.set(PARTS_HEADER, String(parts.length));
    h.set(RECORDS_HEADER, String(parts[i].records));
    h.set(ERRORS_HEADER, String(parts[i].errors));
    if (batch.eos && i === parts.length - 1) h.set(Headers.Eos, '1');
    const id = parts.length === 1 ? msgId(batch.session, batch.chunk) : `${msgId(batch.session, batch.chunk)}.p${i}`;
    acks.push(await bus.js.publish(subject, parts[i].payload, { msgID: id, headers: h }));
  }
  return acks;
}

interface BatchPart {
  payload: Uint8Array;
  records: number;
  errors: number;
}

function splitBatch(batch: RecordBatch): BatchPart[] {
  const { records: _records, ...envelopeFields } = batch;
  const envelope = (eos: boolean) => JSON.stringify({ ...envelopeFields, eos }).slice(0, -1);
  const recordJson = batch.records.map((r) => JSON.stringify(r));
  // Parts are cut by the records' sizes alone, so the same records always give the same parts.
  const groups: Array<{ start: number; end: number }> = [];
  let start = 0;
  let size = 0;
  for (let i = 0; i < recordJson.length; i++) {
    if (i > start && size + recordJson[i].length + 1 > MAX_BATCH_PAYLOAD) {
      groups.push({ start, end: i });
      start = i;
      size = 0;
    }
    size += recordJson[i].length + 1;
  }
  groups.push({ start, end: recordJson.length });
  return groups.map(({ start: from, end: to }, i) => {
    let errors = 0;
    for (let j = from; j < to; j++) if (batch.records[j].kind === 'error') errors++;
    const eos = batch.eos && i === groups.length - 1;
    const body = recordJson.slice(from, to).join(',');
    return { payload: encoder.encode(`${envelope(eos)},"records":[${body}]}`), records: to - from, errors };
  });
}

export function parseRecordBatch(data: Uint8Array): RecordBatch {
  return JSON.parse(textDecoder.decode(data)) as RecordBatch;
}
