import type { RedecodeResult } from '@tracehub/api-contract';
import { chunkPieces, isProtocol, type TraceDecoder, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import {
  type Database,
  getLinkSettings,
  getSession,
  isSessionLinkComplete,
  linkBytesKeptSince,
  MAX_BLOCK_RECORDS,
  type SessionBatchSummary,
  sessionLinkChunks,
  storeRecords,
} from '@tracehub/db';
import type { LinkSettings } from '@tracehub/decoder-service';
import { type Kysely, sql } from 'kysely';
import { decoderFactoryFor } from './factories.js';

/** Why a session cannot be re-decoded; `code` says which, for an HTTP status or an exit code. */
export class RedecodeError extends Error {
  override name = 'RedecodeError';
  constructor(
    readonly code: 'not-found' | 'live' | 'no-link-bytes' | 'incomplete',
    message: string,
  ) {
    super(message);
  }
}

export interface RedecodeOptions {
  /** Called as link bytes are decoded: bytes done of the session's stored bytes. */
  onProgress?: (done: number, total: number) => void;
  /** Records stored per write, in whole blocks (default `MAX_BLOCK_RECORDS`, 4000). */
  batchRecords?: number;
}

export type { RedecodeResult };

/**
 * Decodes a session's stored link bytes again, with the link's current settings (and over
 * them those the gateway sent with the session, as the decoder service takes them) and this
 * build's decoder, and replaces the session's records, dictionary entries and counts in one
 * transaction: readers see the old records until it commits and the new ones after, never a
 * mix. Chunks are fed exactly as the decoder service feeds them (the same boundaries, receive
 * times, `th-lost` and pauses, records numbered from 0), so the records are those a live
 * decode with these settings would have stored. The session starts with an empty codec: what a
 * QS decoder had learnt from the link's earlier sessions (dictionaries kept across a
 * reconnect) is not carried into a re-decode.
 */
export async function redecodeSession(
  db: Kysely<Database>,
  sessionId: string,
  opts: RedecodeOptions = {},
): Promise<RedecodeResult> {
  const started = performance.now();
  const session = await getSession(db, sessionId);
  if (!session) throw new RedecodeError('not-found', `no session '${sessionId}'`);
  if (session.ended_at === null)
    throw new RedecodeError('live', `session '${sessionId}' has not ended: re-decode it once its link has closed it`);
  if (session.link_chunks === 0) {
    // None at all: a session from before link bytes were kept has none for good; a later one
    // has its records stored before its bytes (they go through storage separately).
    const keptSince = await linkBytesKeptSince(db);
    if (keptSince === undefined || session.started_at < keptSince)
      throw new RedecodeError(
        'no-link-bytes',
        `session '${sessionId}' has no stored link bytes (it was stored before they were kept): it cannot be re-decoded`,
      );
  }
  if (session.link_chunks === 0 || !(await isSessionLinkComplete(db, sessionId)))
    throw new RedecodeError(
      'incomplete',
      `the link bytes of session '${sessionId}' are not all stored yet (or some were lost in storage): try again later`,
    );
  if (!isProtocol(session.protocol))
    throw new RedecodeError('not-found', `session '${sessionId}' has no known protocol`);
  const link = { protocol: session.protocol, rig: session.rig, link: session.link };
  // The link's stored settings with those the gateway sent with the session's chunks over them,
  // as the decoder service lays them. Settings are stored as JSON: what comes back is JSON.
  let settings = {
    ...((await getLinkSettings(db, session.rig, session.link)) ?? {}),
    ...(session.link_settings ?? {}),
  } as LinkSettings;
  const factory = decoderFactoryFor(session.protocol);
  let decoder: TraceDecoder;
  let settingsRefused: string | undefined;
  try {
    decoder = factory.create(link, settings);
  } catch (err) {
    // As the decoder service does: settings the codec refuses (a .dic qspy would not read)
    // decode with the defaults; the result says so.
    settingsRefused = (err as Error).message;
    settings = {};
    decoder = factory.create(link, settings);
  }
  const total = Number(session.link_bytes);
  const batchRecords = opts.batchRecords ?? MAX_BLOCK_RECORDS;

  return db.transaction().execute(async (trx) => {
    // The session's writer lock, as storage takes it: a late re-delivery waits, then finds the
    // new blocks and stores nothing twice.
    await sql`select pg_advisory_xact_lock(hashtextextended(${`rec:${sessionId}`}, 0))`.execute(trx);
    await trx.deleteFrom('record_blocks').where('session', '=', sessionId).execute();
    await trx.deleteFrom('dictionaries').where('session', '=', sessionId).execute();

    let pending: TraceRecord[] = [];
    let seq = 0;
    let chunks = 0;
    let bytes = 0;
    let summary: Counts = {
      records: 0,
      errors: 0,
      gaps: 0,
      lostBytes: 0,
      lastChunk: -1,
      targetInfo: null,
    };
    /** Stores whole batches of pending records (all of them at the end), keeping the rest for the next. */
    const flush = async (all: boolean) => {
      const n = all ? pending.length : pending.length - (pending.length % batchRecords);
      if (n === 0) return;
      // Whole batches make whole blocks: a batch of 4000 and a few would be two blocks.
      const stored = await storeRecords(trx, [{ session: sessionId, records: pending.slice(0, n) }]);
      pending = pending.slice(n);
      for (const s of stored.sessions) summary = addCounts(summary, s);
    };
    const place = { ...link, session: sessionId, chunk: 0, hostNs: 0n, seq: 0 };
    const emit = (r: Parameters<Parameters<TraceDecoder['push']>[2]>[0]) => {
      place.seq = seq++;
      pending.push(toTraceRecord(r, place));
    };
    let last: { chunk: number; recvNs: bigint } | undefined;
    let ended = false;
    for await (const c of sessionLinkChunks(trx, sessionId)) {
      place.chunk = c.chunk;
      place.hostNs = c.recvNs;
      // A stretch at a time, as the decoder service pushes it (STP v1 pauses inside a chunk).
      const pieces = chunkPieces(c.data, c, decoder);
      if (c.data.length > 0 || c.lost > 0) {
        for (const piece of pieces) {
          place.hostNs = piece.ctx.hostNs;
          decoder.push(piece.data, piece.ctx, emit);
        }
      }
      // A marker set on the live link, kept with its chunk: in its place, as the decoder service puts it.
      if (c.marker && decoder.mark) decoder.mark(c.marker, pieces[pieces.length - 1].ctx, emit);
      place.hostNs = c.recvNs;
      if (c.eos) {
        decoder.end(pieces[pieces.length - 1].ctx, emit);
        ended = true;
      }
      last = { chunk: c.chunk, recvNs: c.recvNs };
      chunks++;
      bytes += c.data.length;
      if (pending.length >= batchRecords) await flush(false);
      opts.onProgress?.(bytes, total);
    }
    // A session that ended without its end chunk (its gateway died) is closed as the decoder
    // service closes it: at the next chunk number.
    if (!ended && last) {
      place.chunk = last.chunk + 1;
      place.hostNs = last.recvNs;
      decoder.end({ hostNs: last.recvNs }, emit);
    }
    await flush(true);
    const previousRecords = Number(session.record_count);
    await trx
      .updateTable('sessions')
      .set({
        record_count: summary.records,
        record_total: seq,
        error_count: summary.errors ?? 0,
        gap_count: summary.gaps ?? 0,
        lost_bytes: summary.lostBytes ?? 0,
        target_info: summary.targetInfo,
        first_host_time: summary.firstHostTime ?? null,
        last_host_time: summary.lastHostTime ?? null,
      })
      .where('id', '=', sessionId)
      .execute();
    return {
      session: sessionId,
      settings,
      chunks,
      bytes,
      records: summary.records,
      errors: summary.errors ?? 0,
      gaps: summary.gaps ?? 0,
      previousRecords,
      ...(settingsRefused === undefined ? {} : { settingsRefused }),
      ms: performance.now() - started,
    };
  });
}

type Counts = SessionBatchSummary['counts'] & { targetInfo: Record<string, unknown> | null };

/** Counts of two stores of one session added; the later target info wins. */
function addCounts(a: Counts, s: SessionBatchSummary): Counts {
  const b = s.counts;
  return {
    records: a.records + b.records,
    errors: (a.errors ?? 0) + (b.errors ?? 0),
    gaps: (a.gaps ?? 0) + (b.gaps ?? 0),
    lostBytes: (a.lostBytes ?? 0) + (b.lostBytes ?? 0),
    lastChunk: Math.max(a.lastChunk ?? -1, b.lastChunk ?? -1),
    firstHostTime: a.firstHostTime ?? b.firstHostTime,
    lastHostTime: b.lastHostTime ?? a.lastHostTime,
    targetInfo: s.targetInfo ?? a.targetInfo,
  };
}
