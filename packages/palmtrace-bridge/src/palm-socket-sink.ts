import type { RecordBatch } from '@tracehub/contracts';
import { type ByteChunk, type SendCounters, socketSink } from '@tracehub/live';
import type { RecordMessageEncoder, RecordMessages } from './record-messages.js';

/** PalmTrace messages as they go into an outlet: the bytes of one or more messages, and how many. */
export type PalmChunk = ByteChunk;
export { type SendCounters, socketSink };

export function chunkOf(messages: RecordMessages): PalmChunk {
  if (messages instanceof Uint8Array) return { bytes: messages, messages: 1 };
  return { bytes: Buffer.concat(messages), messages: messages.length };
}

/**
 * The messages of a live batch's records that pass the encoder's filter, as one chunk (one
 * write per connection), with the number of records in it; undefined when none pass.
 */
export function encodeBatch(
  encoder: RecordMessageEncoder,
  batch: RecordBatch,
): { chunk: PalmChunk; records: number } | undefined {
  if (!encoder.admitsLink(batch)) return undefined;
  const parts: Uint8Array[] = [];
  let records = 0;
  for (const record of batch.records) {
    if (!encoder.matches(record)) continue;
    const messages = encoder.encode(record);
    if (!messages) continue;
    records++;
    if (messages instanceof Uint8Array) parts.push(messages);
    else parts.push(...messages);
  }
  if (records === 0) return undefined;
  return { chunk: { bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts), messages: parts.length }, records };
}
