import { type Kysely, sql } from 'kysely';

/**
 * Block summaries that views on the target's clock and the state-machine view read instead of
 * the records:
 * - the target time the block's records span (unwrapped ticks, least and greatest) and the
 *   target segments of its first and last timed records, to find the blocks of a window;
 * - `target_index`: per record, its timeline lane (`target_lanes`), whether it is an error and
 *   its target segment and time (contracts' `TargetIndex`), so a timeline counts records
 *   exactly per lane and time slice without decoding blocks;
 * - `machines`: the QEP records' state machines, counted per object (contracts' `MachineTallies`),
 *   as packed JSON (`blocks/packed-column.ts`).
 * Storage fills them when it writes a block, compaction when it merges blocks. Blocks written
 * before (and blocks whose publisher made no such summary) keep them null, and readers decode
 * those blocks' records as before: nothing is backfilled here.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table record_blocks
      add column target_first_segment integer,
      add column target_last_segment integer,
      add column min_target_time numeric(20,0),
      add column max_target_time numeric(20,0),
      add column target_untimed integer,
      add column target_lanes text[],
      add column target_index bytea,
      add column machines bytea`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table record_blocks
      drop column target_first_segment,
      drop column target_last_segment,
      drop column min_target_time,
      drop column max_target_time,
      drop column target_untimed,
      drop column target_lanes,
      drop column target_index,
      drop column machines`.execute(db);
}
