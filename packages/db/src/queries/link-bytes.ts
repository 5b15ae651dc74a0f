import { type Kysely, sql } from 'kysely';
import { decompressBlock } from '../blocks/compression.js';
import { decodeLinkChunks, type LinkChunk } from '../blocks/link-chunk-block.js';
import type { Database } from '../database.js';

/**
 * A session's stored raw chunks in chunk order, a few blocks at a time: memory stays at a
 * page of blocks whatever the session's size. Concatenated, their `data` are exactly the
 * bytes the gateway published.
 */
export async function* sessionLinkChunks(
  db: Kysely<Database>,
  session: string,
  blocksPerPage = 8,
): AsyncGenerator<LinkChunk> {
  let after = -1;
  for (;;) {
    const blocks = await db
      .selectFrom('link_chunks')
      .select(['first_chunk', 'codec', 'data'])
      .where('session', '=', session)
      .where('first_chunk', '>', after)
      .orderBy('first_chunk')
      .limit(blocksPerPage)
      .execute();
    for (const block of blocks) yield* decodeLinkChunks(decompressBlock(block.codec, block.data));
    if (blocks.length < blocksPerPage) return;
    after = blocks[blocks.length - 1].first_chunk;
  }
}

/** Where the gateway dropped bytes in a session: before `chunk`, at `offset` of the stored bytes. */
export interface LinkLoss {
  chunk: number;
  /** Bytes of the session's stored link bytes before the loss. */
  offset: number;
  /** Bytes dropped (`th-lost`). */
  lost: number;
}

/** Every recorded loss of a session's link bytes, in order; reads only the blocks that have one. */
export async function sessionLinkLosses(db: Kysely<Database>, session: string): Promise<LinkLoss[]> {
  const { rows } = await sql<{ codec: number; data: Buffer; before: string }>`
    select codec, data, before from (
      select codec, data, lost_bytes,
             coalesce(sum(byte_count) over (order by first_chunk rows between unbounded preceding and 1 preceding), 0)::text as before
      from link_chunks where session = ${session}
    ) as b
    where lost_bytes > 0`.execute(db);
  const losses: LinkLoss[] = [];
  for (const row of rows) {
    let offset = Number(row.before);
    for (const c of decodeLinkChunks(decompressBlock(row.codec, row.data))) {
      if (c.lost > 0) losses.push({ chunk: c.chunk, offset, lost: c.lost });
      offset += c.data.length;
    }
  }
  return losses;
}

/**
 * True when every raw chunk of the session is stored: its end-of-session chunk is, and the
 * session counts as many chunks as that chunk's number says there were.
 */
export async function isSessionLinkComplete(db: Kysely<Database>, session: string): Promise<boolean> {
  const { rows } = await sql<{ complete: boolean }>`
    select coalesce((
      select s.link_chunks = b.last_chunk + 1
      from sessions s join link_chunks b on b.session = s.id and b.eos
      where s.id = ${session}
      limit 1), false) as complete`.execute(db);
  return rows[0]?.complete === true;
}
