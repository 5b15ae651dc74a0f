import { type Kysely, type Selectable, sql } from 'kysely';
import type { Database, RecordLossesTable } from '../database.js';

export type RecordLossRow = Selectable<RecordLossesTable>;

export interface RecordLoss {
  session: string;
  /** The raw chunk whose records they were. */
  chunk: number;
  /** Their seqs, when the message said (its summary); null otherwise. */
  firstSeq: number | null;
  lastSeq: number | null;
  records: number;
  /** What Postgres (or the reader) said was wrong with them. */
  reason: string;
}

/**
 * Keeps that a message's records could not be stored, and counts them on their session, in
 * one transaction (or the caller's). The session row must exist (storage registers a
 * session before it writes any of its records).
 */
export async function recordLoss(db: Kysely<Database>, loss: RecordLoss): Promise<void> {
  const write = async (trx: Kysely<Database>) => {
    await trx
      .insertInto('record_losses')
      .values({
        session: loss.session,
        chunk: loss.chunk,
        first_seq: loss.firstSeq,
        last_seq: loss.lastSeq,
        records: loss.records,
        // A reason is a message from Postgres or a parser: kept short, and without NUL bytes Postgres refuses.
        reason: loss.reason.replaceAll('\u0000', '').slice(0, 500),
      })
      .execute();
    await trx
      .updateTable('sessions')
      .set({ records_refused: sql`records_refused + ${loss.records}` })
      .where('id', '=', loss.session)
      .execute();
  };
  await (db.isTransaction ? write(db) : db.transaction().execute(write));
}

/** A session's record losses, in chunk order. */
export async function sessionRecordLosses(db: Kysely<Database>, session: string): Promise<RecordLossRow[]> {
  return db
    .selectFrom('record_losses')
    .selectAll()
    .where('session', '=', session)
    .orderBy('chunk')
    .orderBy('id')
    .execute();
}
