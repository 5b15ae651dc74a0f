import { TextLineBatch, type TraceRecord, textEncodingOf } from '@tracehub/contracts';
import type { ExportFormat } from '@tracehub/contracts/export-formats';
import { type Database, type RecordRow, rowToTraceRecord, sessionLinkChunks } from '@tracehub/db';
import { escapeFrame } from '@tracehub/qs';
import type { Kysely } from 'kysely';
import { perfettoChunks, type TickRateOf } from './perfetto.js';

export { EXPORT_FORMATS, type ExportFormat } from '@tracehub/contracts/export-formats';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  // QS lines are qspy's Latin-1 bytes, STP lines UTF-8: no one charset names both.
  qspy: 'text/plain',
  ndjson: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
  raw: 'application/octet-stream',
  perfetto: 'application/json',
};

export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = {
  qspy: 'txt',
  ndjson: 'ndjson',
  csv: 'csv',
  raw: 'bin',
  perfetto: 'trace.json',
};

const CSV_COLUMNS = [
  'rig',
  'link',
  'session',
  'seq',
  'chunk',
  'protocol',
  'host_ns',
  'target_ts',
  'kind',
  'type',
  'name',
  'qs_obj',
  'qs_sig',
  'qs_prio',
  'stp_master',
  'stp_channel',
  'fields',
  'text',
  'raw_hex',
] as const;

/**
 * Turns stored rows into the export's bytes, one piece at a time, so an export of any size
 * streams with one database page in memory.
 */
export async function* exportChunks(
  rows: AsyncIterable<RecordRow>,
  format: ExportFormat,
  tickRateOf?: TickRateOf,
): AsyncGenerator<Buffer> {
  if (format === 'perfetto') {
    yield* perfettoChunks(rows, tickRateOf);
    return;
  }
  const batch: string[] = [];
  const rawParts: Buffer[] = [];
  const qspyLines = new TextLineBatch();
  let size = 0;
  if (format === 'csv') batch.push(`${CSV_COLUMNS.join(',')}\r\n`);
  for await (const row of rows) {
    if (format === 'raw') {
      const part = rawBytes(row);
      if (part.length > 0) rawParts.push(part);
      size += part.length;
    } else if (format === 'qspy') {
      // What qspy prints: each record's text as its own line(s); records it prints nothing for stay silent.
      if (row.text !== '') qspyLines.add(`${row.text}\n`, textEncodingOf(row.protocol));
      size = qspyLines.length;
    } else {
      const piece = textPiece(row, format);
      if (piece !== '') batch.push(piece);
      size += piece.length;
    }
    // ~64 KiB per write: few syscalls, bounded memory.
    if (size >= 65_536) {
      yield flush();
      size = 0;
    }
  }
  if (batch.length > 0 || rawParts.length > 0 || qspyLines.length > 0) yield flush();

  function flush(): Buffer {
    if (format === 'raw') return Buffer.concat(rawParts.splice(0));
    if (format === 'qspy') return qspyLines.take();
    return Buffer.from(batch.splice(0).join(''), 'utf8');
  }
}

/**
 * A session's stored link bytes, exactly as the gateway published them, in pieces of about
 * 64 KiB. Bytes the gateway dropped are not in them; the session says how many
 * (`link_lost_bytes`), and `sessionLinkLosses` where.
 */
export async function* linkByteChunks(db: Kysely<Database>, session: string): AsyncGenerator<Buffer> {
  let parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of sessionLinkChunks(db, session)) {
    if (chunk.data.length === 0) continue;
    parts.push(chunk.data);
    size += chunk.data.length;
    if (size >= 65_536) {
      yield Buffer.concat(parts);
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield Buffer.concat(parts);
}

function textPiece(row: RecordRow, format: 'ndjson' | 'csv'): string {
  switch (format) {
    case 'ndjson':
      return `${JSON.stringify(rowToTraceRecord(row))}\n`;
    case 'csv':
      return `${csvLine(row)}\r\n`;
  }
}

function csvLine(row: RecordRow): string {
  const values: Array<string | number | bigint | null> = [
    row.rig,
    row.link,
    row.session,
    row.seq,
    row.chunk,
    row.protocol,
    row.host_ns,
    row.target_ts,
    row.kind,
    row.type,
    row.name,
    row.qs_obj,
    row.qs_sig,
    row.qs_prio,
    row.stp_master,
    row.stp_channel,
    JSON.stringify(row.fields),
    row.text,
    Buffer.from(row.raw).toString('hex'),
  ];
  return values.map(csvField).join(',');
}

/** RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled. */
export function csvField(value: string | number | bigint | null): string {
  if (value === null) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * The bytes a record came from, as they were on the link. QS records keep a frame's
 * un-escaped contents (seq, id, payload, checksum), so the QS codec escapes them again and
 * closes them with a flag: the export replays into qspy or `tracehub decode` as the original
 * capture did. Other protocols keep their bytes as they were; records made by a decoder (gaps)
 * have none.
 */
export function rawBytes(row: RecordRow): Buffer {
  const raw = row.raw;
  if (raw.length === 0 || row.protocol !== 'qs') return raw;
  const escaped = escapeFrame(raw);
  return Buffer.from(escaped.buffer, escaped.byteOffset, escaped.length);
}

/** A record as JSON for responses: the stored row as the TraceRecord it was. */
export const toRecord = (row: RecordRow): TraceRecord => rowToTraceRecord(row);
