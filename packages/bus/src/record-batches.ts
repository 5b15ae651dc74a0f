import type { PubAck } from '@nats-io/jetstream';
import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import {
  type BatchRecord,
  type BusNames,
  Headers,
  msgId,
  nodeZstd,
  placeRecords,
  type RecordBatch,
  type RecordsSummary,
  summarizeRecords,
} from '@tracehub/contracts';
import { jetStreamPublish } from './js-publish.js';
import type { Bus } from './types.js';

/** Record batches above this size are split into parts so no message nears max_payload (1 MB). */
export const MAX_BATCH_PAYLOAD = 512 * 1024;

export const PART_HEADER = 'th-part';
export const PARTS_HEADER = 'th-parts';
/** How many records the message holds, so a consumer can size batches without parsing. */
export const RECORDS_HEADER = 'th-records';
/** How many of them are error records. */
export const ERRORS_HEADER = 'th-errors';
/** On the end-of-session message: how many records the whole session has. */
export const SESSION_RECORDS_HEADER = 'th-session-records';
/**
 * The summary of the message's records (`RecordsSummary` as JSON): what storage keeps beside
 * a block of them, made where the records are objects already, so storage never parses them.
 */
export const SUMMARY_HEADER = 'th-summary';
/**
 * How the payload holds the records: `zstd-records`, the inside of the records' JSON array as
 * one zstd frame, the envelope being in the subject and headers (storage keeps the frame as it
 * is); absent, the batch as JSON (`RecordBatch`), compressed or not.
 */
export const PAYLOAD_HEADER = 'th-payload';
export const ZSTD_RECORDS_PAYLOAD = 'zstd-records';
/** With `zstd-records`: bytes of the records' JSON (the frame's content). */
export const RECORDS_BYTES_HEADER = 'th-records-bytes';

const encoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Record payloads are compressed with zstd level 1 where Node has it: a QS record's ~465 bytes
 * of JSON become ~30, so JetStream stores, copies and sends a fifteenth of the bytes and its
 * limits hold fifteen times the records. Payloads under 1 KiB are left as they are.
 */
const COMPRESS_FROM = 1024;
/** How a compressed payload begins: a zstd frame's magic number (JSON never starts so). */
const ZSTD_MAGIC = 0xfd2fb528;

/** True when `data` is a zstd frame. */
export function isCompressedPayload(data: Uint8Array): boolean {
  return data.length >= 4 && (data[0] | (data[1] << 8) | (data[2] << 16) | (data[3] << 24)) >>> 0 === ZSTD_MAGIC;
}

/** A record payload as JSON bytes, decompressed when its publisher compressed it. */
export function recordPayloadJson(data: Uint8Array): Uint8Array {
  if (!isCompressedPayload(data)) return data;
  if (!nodeZstd)
    throw new BadRecordMessageError(
      `a record message is zstd-compressed and Node ${process.version} has no zstd: use Node 22.15 or later`,
    );
  try {
    return nodeZstd.decompress(data);
  } catch (err) {
    throw new BadRecordMessageError(`a compressed record message does not decompress: ${(err as Error).message}`);
  }
}

function compressPayload(json: Uint8Array): Uint8Array {
  return nodeZstd && json.length >= COMPRESS_FROM ? nodeZstd.compress(json, 1) : json;
}

/**
 * Publishes the records decoded from one raw chunk to `rec.<protocol>.<rig>.<link>`, as one
 * message with id `<session>.<chunk>` or, when large, as parts `<session>.<chunk>.p<i>`.
 * The split depends only on the records, so a re-decode after a crash produces the same ids
 * and JetStream drops the repeats. Headers say how many records (and error records) each
 * message holds, and carry the rest of the envelope (receive time, session record count), so
 * consumers that only count or register need not parse. Batches published one after another
 * go out in that order.
 */
export function publishRecordBatch(bus: Bus, batch: RecordBatch<BatchRecord>): Promise<PubAck[]> {
  return sendRecordBatch(bus, prepareRecordBatch(batch));
}

/** A record batch laid out for the bus (`prepareRecordBatch`), to send with `sendRecordBatch`. */
export interface PreparedRecordBatch {
  batch: RecordBatch<BatchRecord>;
  parts: BatchPart[];
}

/**
 * Lays a batch out as `publishRecordBatch` does: its records' JSON, summaries and zstd frames,
 * to send later with `sendRecordBatch` (a decoder lays a chunk's batch out in the chunk's turn
 * at decoding, and sends it with the others of its step). Compressed on the event loop: Node's
 * asynchronous zstd took 2.4 times the CPU of the same compression done synchronously (295-309
 * against 124-128 us a call for 130 kB of QS records' JSON; the thread pool's hand-off and
 * another core's cold caches), and a fleet's decoder is short of CPU, not of event-loop time.
 */
export function prepareRecordBatch(batch: RecordBatch<BatchRecord>): PreparedRecordBatch {
  return { batch, parts: splitBatch(batch) };
}

/** Publishes a prepared batch; batches sent one after another go out in that order. */
export function sendRecordBatch(bus: Bus, { batch, parts }: PreparedRecordBatch): Promise<PubAck[]> {
  const subject = bus.names.recSubject(batch.protocol, batch.rig, batch.link);
  // Parts go out back to back and their acks are awaited together: one round trip, and
  // JetStream keeps one connection's messages in the order they were sent.
  const acks: Array<Promise<PubAck>> = [];
  for (let i = 0; i < parts.length; i++) {
    const h = natsHeaders();
    h.set(Headers.Session, batch.session);
    h.set(Headers.Chunk, String(batch.chunk));
    h.set(Headers.RecvNs, batch.hostNs);
    h.set(PART_HEADER, String(i));
    h.set(PARTS_HEADER, String(parts.length));
    h.set(RECORDS_HEADER, String(parts[i].records));
    h.set(ERRORS_HEADER, String(parts[i].errors));
    const summaryJson = parts[i].summaryJson;
    if (summaryJson !== undefined) h.set(SUMMARY_HEADER, summaryJson);
    if (parts[i].jsonBytes !== undefined) {
      h.set(PAYLOAD_HEADER, ZSTD_RECORDS_PAYLOAD);
      h.set(RECORDS_BYTES_HEADER, String(parts[i].jsonBytes));
    }
    if (batch.eos && i === parts.length - 1) {
      h.set(Headers.Eos, '1');
      if (batch.sessionRecordCount !== undefined) h.set(SESSION_RECORDS_HEADER, String(batch.sessionRecordCount));
    }
    const id = parts.length === 1 ? msgId(batch.session, batch.chunk) : `${msgId(batch.session, batch.chunk)}.p${i}`;
    h.set(Headers.MsgId, id);
    acks.push(jetStreamPublish(bus.nc, subject, parts[i].payload, h));
  }
  return Promise.all(acks);
}

/** One message of a batch: its payload and what its headers say. */
export interface BatchPart {
  payload: Uint8Array;
  records: number;
  errors: number;
  /** The records' `RecordsSummary` as the header carries it. */
  summaryJson?: string;
  /** With a `zstd-records` payload: bytes of the records' JSON in it. */
  jsonBytes?: number;
}

/**
 * The batch's parts, each payload the inside of its records' JSON array as one zstd frame
 * (storage keeps it as it comes) or, on a Node without zstd, the batch as JSON.
 */
function splitBatch(batch: RecordBatch<BatchRecord>): BatchPart[] {
  const { records, ...envelopeFields } = batch;
  const groups: string[] = [];
  const counts: number[] = [];
  const summaries: GroupSummary[] = [];
  for (let from = 0; from < records.length || groups.length === 0; from += RECORDS_PER_PART) {
    const group = records.slice(from, from + RECORDS_PER_PART);
    stringifyWithin(group, { groups, counts, summaries });
  }
  return groups.map((json, i) => {
    const common = { records: counts[i], ...summaries[i] };
    if (nodeZstd) {
      const inside = encoder.encode(json).subarray(1, -1);
      return { ...common, payload: nodeZstd.compress(inside, 1), jsonBytes: inside.length };
    }
    const eos = batch.eos && i === groups.length - 1;
    const envelope = JSON.stringify({ ...envelopeFields, eos }).slice(0, -1);
    return { ...common, payload: compressPayload(encoder.encode(`${envelope},"records":${json}}`)) };
  });
}

/** Records per message part before any size check: a part is one stringify of its records. */
const RECORDS_PER_PART = 1024;

/**
 * A part's summary travels in a header, and NATS refuses a message whose headers pass 64 KiB:
 * a part whose summary would be longer is halved too (a target that sends a few thousand
 * dictionary entries at once: every name is in its part's summary).
 */
const MAX_SUMMARY_HEADER = 48 * 1024;

/**
 * Appends the JSON of `records` to `out.groups` (with their count and summary), halved (and
 * halved again) while a half would make a message over MAX_BATCH_PAYLOAD or a summary over
 * MAX_SUMMARY_HEADER. Parts depend only on the records, so a re-decode after a crash makes
 * the same parts and JetStream drops the repeats.
 */
function stringifyWithin(
  records: BatchRecord[],
  out: { groups: string[]; counts: number[]; summaries: GroupSummary[] },
): void {
  const json = JSON.stringify(records);
  // Bytes only need counting when the characters might exceed the limit once UTF-8 encoded.
  const fits = json.length <= MAX_BATCH_PAYLOAD / 3 || Buffer.byteLength(json) <= MAX_BATCH_PAYLOAD;
  // A group that is halved anyway needs no summary; one that fits is summarized (and its summary stringified) once.
  const summary = records.length <= 1 || fits ? groupSummary(records) : undefined;
  if (summary && (records.length <= 1 || summaryFits(summary))) {
    out.groups.push(json);
    out.counts.push(records.length);
    out.summaries.push(summary);
    return;
  }
  const half = records.length >> 1;
  stringifyWithin(records.slice(0, half), out);
  stringifyWithin(records.slice(half), out);
}

/** What a part's headers say of its records: how many are errors, and their summary as JSON. */
interface GroupSummary {
  errors: number;
  summaryJson?: string;
}

function groupSummary(records: BatchRecord[]): GroupSummary {
  if (records.length === 0) return { errors: 0 };
  const summary = summarizeRecords(records);
  return { errors: summary.errorCount, summaryJson: JSON.stringify(summary) };
}

/** Whether a part's summary fits its header (bytes counted only where the characters might not). */
function summaryFits({ summaryJson }: GroupSummary): boolean {
  return (
    summaryJson === undefined ||
    summaryJson.length <= MAX_SUMMARY_HEADER / 3 ||
    Buffer.byteLength(summaryJson) <= MAX_SUMMARY_HEADER
  );
}

/**
 * A record message's payload as the batch it holds (decompressed first when it is
 * compressed), its records whole: with the place the envelope says.
 */
export function parseRecordBatch(data: Uint8Array): RecordBatch {
  const batch = JSON.parse(textDecoder.decode(recordPayloadJson(data))) as RecordBatch<BatchRecord>;
  if (Array.isArray(batch?.records)) placeRecords(batch.records, batch);
  return batch as RecordBatch;
}

/**
 * A record message's envelope (the batch without its records), how many records it holds,
 * and their summary when the publisher made one.
 */
export type RecordBatchMeta = Omit<RecordBatch, 'records'> & { recordCount: number; summary?: RecordsSummary };

const DECIMAL = /^[0-9]{1,20}$/;

/**
 * Reads a record message's envelope from its subject and headers, without parsing the
 * payload; `undefined` when they do not say it all (a message from another publisher), in
 * which case the caller parses the payload.
 */
export function readRecordBatchMeta(
  names: BusNames,
  subject: string,
  h: MsgHdrs | undefined,
): RecordBatchMeta | undefined {
  const place = names.parseSubject(subject);
  if (place?.kind !== 'rec' || !h) return undefined;
  const session = h.get(Headers.Session);
  const chunkText = h.get(Headers.Chunk);
  const hostNs = h.get(Headers.RecvNs);
  const recordsText = h.get(RECORDS_HEADER);
  if (!session || !DECIMAL.test(chunkText) || !DECIMAL.test(hostNs) || !DECIMAL.test(recordsText)) return undefined;
  const meta: RecordBatchMeta = {
    protocol: place.protocol,
    rig: place.rig,
    link: place.link,
    session,
    chunk: Number(chunkText),
    hostNs,
    eos: h.has(Headers.Eos),
    recordCount: Number(recordsText),
  };
  const total = h.get(SESSION_RECORDS_HEADER);
  if (meta.eos && DECIMAL.test(total)) meta.sessionRecordCount = Number(total);
  const summary = h.get(SUMMARY_HEADER);
  if (summary) {
    try {
      meta.summary = JSON.parse(summary) as RecordsSummary;
    } catch {
      // A summary that does not parse is as good as none: the records are read instead.
    }
  }
  return meta;
}

const RECORDS_KEY = encoder.encode('"records":[');
const CLOSE_BRACKET = 0x5d;
const CLOSE_BRACE = 0x7d;

/**
 * The records of a payload written by `publishRecordBatch`, as the bytes between the
 * brackets of its `records` array (empty when it has none), cut out without parsing: the
 * envelope comes first and holds no `"records":[` (its strings are names, ids and digits,
 * and a quote inside a JSON string is always escaped), and the array closes the payload.
 * `undefined` when the payload is not laid out that way; the caller then parses it.
 */
export function recordsJsonOf(payload: Uint8Array): Uint8Array | undefined {
  const n = payload.length;
  if (n < 2 || payload[n - 1] !== CLOSE_BRACE || payload[n - 2] !== CLOSE_BRACKET) return undefined;
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, n);
  const key = bytes.indexOf(RECORDS_KEY);
  if (key < 0) return undefined;
  const from = key + RECORDS_KEY.length;
  return from <= n - 2 ? payload.subarray(from, n - 2) : undefined;
}

/**
 * A message's records as storage takes them: the inside of their JSON array, or that inside
 * as the zstd frame it came in (with its length uncompressed).
 */
export type RecordsPayload = { json: Uint8Array } | { frame: Uint8Array; jsonBytes: number };

/** A record message as storage takes it: its envelope, and its records unparsed. */
export interface RecordMessage {
  meta: RecordBatchMeta;
  records: RecordsPayload;
}

export class BadRecordMessageError extends Error {
  override name = 'BadRecordMessageError';
}

/**
 * Reads a record message without parsing its records when `publishRecordBatch` wrote it
 * (envelope from subject and headers, records cut out of the payload); any other message is
 * parsed, its envelope checked, and its records serialized again. Throws
 * `BadRecordMessageError` saying what is missing when the message is not a record batch.
 */
export function readRecordMessage(
  names: BusNames,
  subject: string,
  h: MsgHdrs | undefined,
  data: Uint8Array,
): RecordMessage {
  if (h?.get(PAYLOAD_HEADER) === ZSTD_RECORDS_PAYLOAD) {
    const meta = readRecordBatchMeta(names, subject, h);
    const jsonBytes = Number(h.get(RECORDS_BYTES_HEADER));
    if (!meta) throw new BadRecordMessageError('a zstd-records message without its envelope in the headers');
    if (!Number.isSafeInteger(jsonBytes) || jsonBytes < 0)
      throw new BadRecordMessageError(`a zstd-records message without a valid ${RECORDS_BYTES_HEADER}`);
    if (!isCompressedPayload(data)) throw new BadRecordMessageError('a zstd-records message whose payload is not zstd');
    return { meta, records: { frame: data, jsonBytes } };
  }
  data = recordPayloadJson(data);
  const fast = readRecordBatchMeta(names, subject, h);
  const cut = fast ? recordsJsonOf(data) : undefined;
  if (fast && cut) return { meta: fast, records: { json: cut } };
  let parsed: RecordBatch;
  try {
    parsed = parseRecordBatch(data);
  } catch (err) {
    throw new BadRecordMessageError(`not JSON: ${(err as Error).message}`);
  }
  const { records, ...envelope } = parsed ?? {};
  const place = names.parseSubject(subject);
  const problem = !Array.isArray(records)
    ? 'no records array'
    : place?.kind !== 'rec'
      ? `not a record subject: ${subject}`
      : typeof envelope.session !== 'string' || envelope.session === ''
        ? 'no session'
        : !Number.isSafeInteger(envelope.chunk) || envelope.chunk < 0
          ? 'no chunk number'
          : typeof envelope.hostNs !== 'string' || !DECIMAL.test(envelope.hostNs)
            ? 'no hostNs'
            : undefined;
  if (problem || !place) throw new BadRecordMessageError(problem);
  const meta: RecordBatchMeta = {
    protocol: place.protocol,
    rig: place.rig,
    link: place.link,
    session: envelope.session,
    chunk: envelope.chunk,
    hostNs: envelope.hostNs,
    eos: envelope.eos === true,
    recordCount: records.length,
  };
  if (meta.eos && Number.isSafeInteger(envelope.sessionRecordCount))
    meta.sessionRecordCount = envelope.sessionRecordCount;
  return { meta, records: { json: encoder.encode(JSON.stringify(records)).subarray(1, -1) } };
}

/**
 * A record message as the batch it holds, whichever way its publisher laid it out (live
 * readers: the api's feed, `tracehub tail`). Throws when it is not a record batch.
 */
export function parseRecordMessage(
  names: BusNames,
  subject: string,
  h: MsgHdrs | undefined,
  data: Uint8Array,
): RecordBatch {
  if (h?.get(PAYLOAD_HEADER) !== ZSTD_RECORDS_PAYLOAD) return parseRecordBatch(data);
  const { meta, records } = readRecordMessage(names, subject, h, data);
  const { recordCount: _count, summary: _summary, ...envelope } = meta;
  const json = recordPayloadJson((records as { frame: Uint8Array }).frame);
  const batchRecords = JSON.parse(`[${textDecoder.decode(json)}]`) as BatchRecord[];
  return { ...envelope, records: placeRecords(batchRecords, envelope) };
}
