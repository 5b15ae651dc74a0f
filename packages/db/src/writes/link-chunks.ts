import { type Kysely, sql } from 'kysely';
import { compressBlock, WRITE_CODEC } from '../blocks/compression.js';
import { encodeLinkChunks, type LinkChunk } from '../blocks/link-chunk-block.js';
import type { Database } from '../database.js';

/** Raw chunks of one session to store, in any order; repeats and chunks already stored are skipped. */
export interface SessionLinkChunks {
  session: string;
  chunks: readonly LinkChunk[];
}

export interface InsertLinkChunksResult {
  /** Chunks that were new, their bytes and the bytes the gateway said it dropped before them. */
  chunks: number;
  bytes: number;
  lostBytes: number;
  /** Rows written (blocks). */
  blocks: number;
}

/** A block holds at most this many bytes of link data (uncompressed), so a read stays small. */
const MAX_BLOCK_BYTES = 4 * 1024 * 1024;

/**
 * Stores raw chunks as blocks of consecutive chunks of a session, compressed, and adds what
 * was new to the sessions' link counts (the session rows must exist). Idempotent on
 * (session, chunk): a chunk stored before, or twice in the batch, is stored once. Writers of
 * one session are serialised by a transaction-level advisory lock, so concurrent storages
 * never store a chunk twice; run it in the caller's transaction (or it makes its own).
 */
export async function insertLinkChunks(
  db: Kysely<Database>,
  batch: readonly SessionLinkChunks[],
): Promise<InsertLinkChunksResult> {
  const write = async (trx: Kysely<Database>) => {
    const result: InsertLinkChunksResult = { chunks: 0, bytes: 0, lostBytes: 0, blocks: 0 };
    const sessions = [...batch].sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
    for (const { session, chunks } of sessions) {
      if (chunks.length === 0) continue;
      // Sessions locked in one order by every writer: no deadlock.
      await sql`select pg_advisory_xact_lock(hashtextextended(${`link:${session}`}, 0))`.execute(trx);
      const sorted = [...chunks].sort((a, b) => a.chunk - b.chunk);
      const stored = await trx
        .selectFrom('link_chunks')
        .select(['first_chunk', 'last_chunk'])
        .where('session', '=', session)
        .where('last_chunk', '>=', sorted[0].chunk)
        .where('first_chunk', '<=', sorted[sorted.length - 1].chunk)
        .execute();
      const isStored = (n: number) => stored.some((b) => b.first_chunk <= n && n <= b.last_chunk);
      const fresh: LinkChunk[] = [];
      for (const c of sorted) {
        if (isStored(c.chunk) || fresh[fresh.length - 1]?.chunk === c.chunk) continue;
        fresh.push(c);
      }
      let bytes = 0;
      let lost = 0;
      for (const run of blockRuns(fresh)) {
        const runBytes = run.reduce((n, c) => n + c.data.length, 0);
        const runLost = run.reduce((n, c) => n + c.lost, 0);
        await trx
          .insertInto('link_chunks')
          .values({
            session,
            first_chunk: run[0].chunk,
            last_chunk: run[run.length - 1].chunk,
            host_time: sql<Date>`timestamptz 'epoch' + ${(run[0].recvNs / 1000n).toString()}::bigint * interval '1 microsecond'`,
            chunk_count: run.length,
            byte_count: runBytes,
            lost_bytes: runLost,
            eos: run.some((c) => c.eos),
            codec: WRITE_CODEC,
            data: compressBlock(encodeLinkChunks(run)),
          })
          .execute();
        bytes += runBytes;
        lost += runLost;
        result.blocks++;
      }
      if (fresh.length === 0) continue;
      await trx
        .updateTable('sessions')
        .set({
          link_chunks: sql`link_chunks + ${fresh.length}`,
          link_bytes: sql`link_bytes + ${bytes}`,
          link_lost_bytes: sql`link_lost_bytes + ${lost}`,
        })
        .where('id', '=', session)
        .execute();
      result.chunks += fresh.length;
      result.bytes += bytes;
      result.lostBytes += lost;
    }
    return result;
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/**
 * Sorted chunks cut into runs of consecutive chunk numbers, each within MAX_BLOCK_BYTES: a
 * block covers every chunk from its first to its last, which is what makes "is chunk n
 * stored?" a range test.
 */
function* blockRuns(chunks: readonly LinkChunk[]): Generator<LinkChunk[]> {
  let run: LinkChunk[] = [];
  let bytes = 0;
  for (const c of chunks) {
    const prev = run[run.length - 1];
    if (prev && (c.chunk !== prev.chunk + 1 || bytes + c.data.length > MAX_BLOCK_BYTES)) {
      yield run;
      run = [];
      bytes = 0;
    }
    run.push(c);
    bytes += c.data.length;
  }
  if (run.length > 0) yield run;
}
