import { type Entry, HeldEntries } from './held-entries.js';

/**
 * Why a reader did not get records: it read slower than they came, it was not connected, or
 * they never reached this process live (`unreceived`: it fell behind NATS or reconnected; the
 * records are stored all the same).
 */
export type MissedReason = 'slow' | 'away' | 'unreceived';

/** Where a reader's entries go (an SSE response, a WebSocket, a TCP socket). */
export interface OutletSink<T> {
  /** Writes one entry; false when the transport is backed up (the reader then waits for `whenWritable`). */
  write(item: T): boolean;
  /** Tells the reader how many records it did not get and why; false when backed up. */
  missed(records: number, reason: MissedReason): boolean;
  whenWritable(resume: () => void): void;
}

export interface OutletLimits {
  /** Records held before the oldest entries are dropped. */
  records: number;
  /** Bytes held before the oldest entries are dropped (default: no byte bound). */
  bytes?: number;
}

/** Entries a reader writes per turn of the event loop before it lets other work run. */
const ENTRIES_PER_TURN = 256;

/**
 * A bounded, drop-oldest queue of entries between the live records and one or many readers.
 *
 * `push` never waits and costs the same however many readers there are: it appends, drops the
 * oldest entries past the limits, and wakes only the readers that were waiting for more. Each
 * reader keeps its own position; a reader that falls behind the oldest entry has missed
 * exactly the records between, and is told so (with why) before its next entry. A reader
 * whose transport is backed up costs nothing until its transport drains. With one reader this
 * is that reader's queue (read entries are let go at once); with many (the PalmTrace listening
 * port) every entry is encoded and held once for all of them.
 */
export class Outlet<T> {
  private readonly held = new HeldEntries<T>();
  private readonly readers = new Set<OutletReader<T>>();
  /** Readers that have written everything and wait for the next entry. */
  private readonly waiting = new Set<OutletReader<T>>();
  private roomWaiters: Array<() => void> = [];
  private readonly maxBytes: number;

  constructor(readonly limits: OutletLimits) {
    this.maxBytes = limits.bytes ?? Number.POSITIVE_INFINITY;
  }

  /** Appends an entry of `records` records; drops the oldest entries past the limits. Never waits. */
  push(item: T, records: number, bytes = 0): void {
    this.append({ item, records, bytes });
  }

  /**
   * Tells every reader, in its place in the order, that `records` records never reached the
   * outlet (they were lost before it: the feed saw a gap in a session's seqs). Never waits.
   */
  pushUnreceived(records: number): void {
    if (records <= 0) return;
    this.append({ item: undefined as T, records, bytes: 0, gap: true });
  }

  private append(entry: Entry<T>): void {
    const { held } = this;
    held.append(entry);
    while (held.count > 1 && (held.records - held.gapRecords > this.limits.records || held.bytes > this.maxBytes))
      held.dropOldest();
    if (this.waiting.size > 0) {
      const waiting = [...this.waiting];
      this.waiting.clear();
      for (const reader of waiting) reader.schedule();
    }
  }

  /** A reader that starts at the next entry pushed; `sink` may come later (`attach`). */
  reader(sink?: OutletSink<T>): OutletReader<T> {
    const reader = new OutletReader(this, this.nextSeq, this.recordsEnd);
    this.readers.add(reader);
    if (sink) reader.attach(sink);
    else reader.detach();
    return reader;
  }

  /** Resolves once the outlet holds less than its limits (a replay waits here instead of dropping). */
  whenRoom(): Promise<void> {
    if (this.hasRoom) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Forgets every entry (the outlet's owner is going away). */
  clear(): void {
    while (this.held.count > 0) this.held.dropOldest();
    this.wakeRoomWaiters();
  }

  get heldRecordCount(): number {
    return this.held.records;
  }

  /** @internal */
  get nextSeq(): number {
    return this.held.nextSeq;
  }

  /** @internal */
  get oldestSeq(): number {
    return this.held.firstSeq;
  }

  /** @internal Records pushed so far, in all. */
  get recordsEnd(): number {
    return this.held.recordsBefore + this.held.records;
  }

  /** @internal Records before the oldest entry held. */
  get recordsDropped(): number {
    return this.held.recordsBefore;
  }

  /** @internal */
  entryAt(seq: number): Entry<T> {
    return this.held.at(seq);
  }

  /** @internal A reader has written everything there is. */
  waitForMore(reader: OutletReader<T>): void {
    this.waiting.add(reader);
  }

  /** @internal A reader moved on: with one reader, what it has written is let go. */
  advanced(reader: OutletReader<T>, seq: number): void {
    if (this.readers.size === 1 && this.readers.has(reader)) {
      while (this.held.firstSeq < seq && this.held.count > 0) this.held.dropOldest();
    }
    this.wakeRoomWaiters();
  }

  /** @internal A reader without a transport is not woken (it stays a reader). */
  stopWaiting(reader: OutletReader<T>): void {
    this.waiting.delete(reader);
  }

  /** @internal */
  remove(reader: OutletReader<T>): void {
    this.readers.delete(reader);
    this.waiting.delete(reader);
  }

  private get hasRoom(): boolean {
    const { held } = this;
    return held.records - held.gapRecords < this.limits.records && held.bytes < this.maxBytes;
  }

  private wakeRoomWaiters(): void {
    if (this.roomWaiters.length === 0 || !this.hasRoom) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * One reader of an {@link Outlet}: its position, its transport, and its counts. Writes while
 * the transport accepts more, then waits for it to drain; never blocks the producer.
 */
export class OutletReader<T> {
  private sink: OutletSink<T> | null = null;
  private blocked = false;
  private scheduled = false;
  private closed = false;
  /** Was the transport away since the reader last wrote? Then what it missed was missed while away. */
  private away = false;
  /** Records written to the transport. */
  delivered = 0;
  /** Records this reader was told it missed. */
  private missedTold = 0;

  /** @internal Use {@link Outlet.reader}. */
  constructor(
    private readonly outlet: Outlet<T>,
    private seq: number,
    /** Records before `seq`, in all. */
    private position: number,
  ) {}

  /** Records this reader did not get: those it was told of and those dropped since. */
  get missed(): number {
    return this.missedTold + Math.max(0, this.outlet.recordsDropped - this.position);
  }

  /** Records waiting for this reader. */
  get queued(): number {
    return this.outlet.recordsEnd - Math.max(this.position, this.outlet.recordsDropped);
  }

  get attached(): boolean {
    return this.sink !== null;
  }

  /** Starts (or resumes) writing to a transport. */
  attach(sink: OutletSink<T>): void {
    this.sink = sink;
    this.blocked = false;
    this.schedule();
  }

  /** The transport is gone: entries wait (and the oldest drop) until the next `attach`. */
  detach(): void {
    this.sink = null;
    this.blocked = false;
    this.away = true;
    this.outlet.stopWaiting(this);
  }

  /** Stops reading for good. */
  close(): void {
    this.closed = true;
    this.sink = null;
    this.outlet.remove(this);
  }

  /** @internal */
  schedule(): void {
    if (this.scheduled || this.blocked || this.closed || this.sink === null) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const sink = this.sink;
    if (sink === null || this.blocked || this.closed) return;
    const { outlet } = this;
    let writable = true;
    let written = 0;
    while (writable) {
      if (this.seq < outlet.oldestSeq) {
        const missed = outlet.recordsDropped - this.position;
        this.seq = outlet.oldestSeq;
        this.position = outlet.recordsDropped;
        if (missed > 0) {
          this.missedTold += missed;
          writable = sink.missed(missed, this.away ? 'away' : 'slow');
        }
        this.away = false;
      } else if (this.seq < outlet.nextSeq) {
        if (written++ === ENTRIES_PER_TURN) {
          outlet.advanced(this, this.seq);
          this.schedule();
          return;
        }
        const entry = outlet.entryAt(this.seq);
        this.seq++;
        this.position += entry.records;
        this.away = false;
        if (entry.gap) {
          this.missedTold += entry.records;
          writable = sink.missed(entry.records, 'unreceived');
        } else {
          this.delivered += entry.records;
          writable = sink.write(entry.item);
        }
      } else {
        outlet.advanced(this, this.seq);
        outlet.waitForMore(this);
        return;
      }
    }
    outlet.advanced(this, this.seq);
    this.blocked = true;
    sink.whenWritable(() => {
      if (this.sink !== sink || this.closed) return;
      this.blocked = false;
      this.schedule();
    });
  }
}
