import { type InsertObject, type Kysely, sql } from 'kysely';
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
 *
 * A batch costs four statements whatever the number of sessions in it (the locks, the blocks
 * already stored, the inserts, the counts): a fleet's batch holds a chunk or two of each of
 * its links, and four statements a session each made storage's link-bytes writer the busiest
 * part of a 64-link fleet (30% of storage's CPU in writev alone).
 */
export async function insertLinkChunks(
  db: Kysely<Database>,
  batch: readonly SessionLinkChunks[],
): Promise<InsertLinkChunksResult> {
  const write = async (trx: Kysely<Database>) => {
    const result: InsertLinkChunksResult = { chunks: 0, bytes: 0, lostBytes: 0, blocks: 0 };
    const groups = batch
      .filter((g) => g.chunks.length > 0)
      .map((g) => ({ session: g.session, sorted: [...g.chunks].sort((a, b) => a.chunk - b.chunk) }))
      .sort((a, b) => (a.session < b.session ? -1 : a.session > b.session ? 1 : 0));
    if (groups.length === 0) return result;
    const sessions = groups.map((g) => g.session);
    // Sessions locked in one order by every writer (the array's): no deadlock.
    await sql`select pg_advisory_xact_lock(hashtextextended('link:' || s, 0)) from unnest(${sessions}::text[]) as s`.execute(
      trx,
    );
    const stored = await sql<{ session: string; first_chunk: number; last_chunk: number }>`
      select l.session, l.first_chunk, l.last_chunk
      from unnest(${sessions}::text[], ${groups.map((g) => g.sorted[0].chunk)}::int[],
        ${groups.map((g) => g.sorted[g.sorted.length - 1].chunk)}::int[]) as v(session, lo, hi)
      join link_chunks l on l.session = v.session and l.last_chunk >= v.lo and l.first_chunk <= v.hi`.execute(trx);
    const storedBySession = new Map<string, Array<{ first_chunk: number; last_chunk: number }>>();
    for (const b of stored.rows) {
      const list = storedBySession.get(b.session) ?? [];
      list.push(b);
      storedBySession.set(b.session, list);
    }
    const rows: InsertObject<Database, 'link_chunks'>[] = [];
    const counts: Array<{ session: string; chunks: number; bytes: number; lost: number }> = [];
    for (const { session, sorted } of groups) {
      const blocks = storedBySession.get(session) ?? [];
      const isStored = (n: number) => blocks.some((b) => b.first_chunk <= n && n <= b.last_chunk);
      const fresh: LinkChunk[] = [];
      for (const c of sorted) {
        if (isStored(c.chunk) || fresh[fresh.length - 1]?.chunk === c.chunk) continue;
        fresh.push(c);
      }
      if (fresh.length === 0) continue;
      let bytes = 0;
      let lost = 0;
      for (const run of blockRuns(fresh)) {
        const runBytes = run.reduce((n, c) => n + c.data.length, 0);
        const runLost = run.reduce((n, c) => n + c.lost, 0);
        rows.push({
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
        });
        bytes += runBytes;
        lost += runLost;
      }
      counts.push({ session, chunks: fresh.length, bytes, lost });
      result.chunks += fresh.length;
      result.bytes += bytes;
      result.lostBytes += lost;
    }
    if (rows.length === 0) return result;
    await trx.insertInto('link_chunks').values(rows).execute();
    result.blocks = rows.length;
    await sql`
      update sessions as s set
        link_chunks = s.link_chunks + v.chunks,
        link_bytes = s.link_bytes + v.bytes,
        link_lost_bytes = s.link_lost_bytes + v.lost
      from unnest(${counts.map((c) => c.session)}::text[], ${counts.map((c) => c.chunks)}::int[],
        ${counts.map((c) => String(c.bytes))}::bigint[], ${counts.map((c) => String(c.lost))}::bigint[])
        as v(id, chunks, bytes, lost)
      where s.id = v.id`.execute(trx);
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
