/** One entry of an outlet: an item standing for `records` records and `bytes` bytes. */
export interface Entry<T> {
  item: T;
  records: number;
  bytes: number;
  /** A gap: `records` records that never reached the outlet (told to readers as `unreceived`). */
  gap?: true;
}

/**
 * The entries an outlet holds, oldest first, each with its sequence number, and the totals
 * readers place themselves by: records, gap records and bytes held, records let go before
 * the oldest. Appending and letting go of the oldest cost the same however many are held.
 */
export class HeldEntries<T> {
  private entries: Array<Entry<T> | undefined> = [];
  /** Index in `entries` of the oldest entry held. */
  private head = 0;
  /** Sequence number of the oldest entry held. */
  firstSeq = 0;
  /** Records of every entry before `firstSeq`, read or dropped. */
  recordsBefore = 0;
  records = 0;
  /** Records of the gap entries held: counted in positions, not against an outlet's limits. */
  gapRecords = 0;
  bytes = 0;

  get count(): number {
    return this.entries.length - this.head;
  }

  /** Sequence number the next entry appended gets. */
  get nextSeq(): number {
    return this.firstSeq + this.count;
  }

  append(entry: Entry<T>): void {
    this.entries.push(entry);
    this.records += entry.records;
    if (entry.gap) this.gapRecords += entry.records;
    this.bytes += entry.bytes;
  }

  /** The entry of sequence number `seq` (from `firstSeq` to before `nextSeq`). */
  at(seq: number): Entry<T> {
    return this.entries[this.head + (seq - this.firstSeq)] as Entry<T>;
  }

  /** Lets go of the oldest entry. */
  dropOldest(): void {
    const entry = this.entries[this.head] as Entry<T>;
    this.entries[this.head] = undefined;
    this.head++;
    this.firstSeq++;
    this.recordsBefore += entry.records;
    this.records -= entry.records;
    if (entry.gap) this.gapRecords -= entry.records;
    this.bytes -= entry.bytes;
    // The let-go slots are given back once they are half the array.
    if (this.head >= 1024 && this.head * 2 >= this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }
}
