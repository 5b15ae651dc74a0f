import type { TraceRecord } from '@tracehub/contracts';
import { type Database, filteredRecords, type RecordFilter, rowToTraceRecord, sessionRecords } from '@tracehub/db';
import type { Kysely } from 'kysely';
import type { ReplayRequest, ReporterFilter } from './endpoint-schema.js';

/**
 * The stored records a replay asks for, in order, one database page in memory at a time: a
 * session in seq order, or a host-time range in (host time, session, seq) order. The parts of
 * the endpoint's filter that the records query can narrow by go to Postgres; the encoder
 * applies the whole filter again.
 */
export async function* storedRecords(
  db: Kysely<Database>,
  replay: ReplayRequest,
  filter: ReporterFilter | undefined,
): AsyncGenerator<TraceRecord> {
  if (replay.session !== undefined && replay.from === undefined) {
    for await (const row of sessionRecords(db, replay.session, 2000)) yield rowToTraceRecord(row);
    return;
  }
  const query: RecordFilter = {
    session: replay.session,
    from: replay.from !== undefined ? new Date(replay.from) : undefined,
    to: replay.to !== undefined ? new Date(replay.to) : undefined,
    rig: filter?.rigs?.length === 1 ? filter.rigs[0] : undefined,
    link: filter?.links?.length === 1 ? filter.links[0] : undefined,
    protocol: filter?.protocols?.length === 1 ? filter.protocols[0] : undefined,
    names: filter?.names,
    kinds: filter?.kinds,
  };
  for await (const row of filteredRecords(db, query, 'asc')) yield rowToTraceRecord(row);
}

/**
 * Waits until a record is due at the original pace: its host time after the first record's,
 * measured from when the first one was sent. Long silences are kept as they were.
 */
export class OriginalPace {
  private firstHostNs: bigint | null = null;
  private startedAt = 0;

  async wait(record: TraceRecord, signal: { stopped: boolean }): Promise<void> {
    const hostNs = BigInt(record.hostNs);
    if (this.firstHostNs === null) {
      this.firstHostNs = hostNs;
      this.startedAt = performance.now();
      return;
    }
    const dueMs = Number((hostNs - this.firstHostNs) / 1_000_000n);
    for (;;) {
      const wait = this.startedAt + dueMs - performance.now();
      if (wait <= 0 || signal.stopped) return;
      // Sleep in slices so removing the endpoint ends a replay paused in a long silence.
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 500)));
    }
  }
}
