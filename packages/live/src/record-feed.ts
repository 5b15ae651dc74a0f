import type { Subscription } from '@nats-io/transport-node';
import { type Bus, parseRecordMessage } from '@tracehub/bus';
import { type Log, type RecordBatch, silentLog } from '@tracehub/contracts';

/**
 * Takes one batch of live records. It runs in the NATS callback, so it must only filter,
 * encode and push into an {@link Outlet}: never wait, never write to a transport.
 */
export type BatchConsumer = (batch: RecordBatch) => void;

/** Records of a session that never reached this process live (a gap in its seqs). */
export interface UnreceivedRecords {
  protocol: string;
  rig: string;
  link: string;
  session: string;
  /** Seq of the first record missing, and how many are. */
  firstSeq: number;
  records: number;
}

/** Takes a gap's notice (in the NATS callback too: it must only push into an outlet). */
export type UnreceivedConsumer = (gap: UnreceivedRecords) => void;

/** Sessions whose next seq the feed remembers (the oldest forgotten first). */
const SESSIONS_KEPT = 10_000;

/**
 * The process's one core-NATS subscription to the live records (`rec.>`): open while at least
 * one consumer wants live records, closed when the last one leaves. Each batch is parsed once
 * and handed to every consumer in arrival order (the order of the records within each link).
 * Consumers push into bounded outlets, so the subscription is always read as fast as NATS
 * delivers and the server never sees this process as a slow consumer.
 *
 * A decoder numbers a session's records without a gap, so the feed checks each session's
 * seqs: records it saw already (a decoder sent a chunk's records again after a restart or a
 * takeover; the record stream keeps one copy, a core subscription sees both) are left out,
 * and records skipped (lost between NATS and this process: a reconnect, a slow-consumer cut)
 * are told to the consumers as unreceived, so every reader's missed count stays true.
 */
export class RecordFeed {
  private readonly consumers = new Map<BatchConsumer, UnreceivedConsumer | undefined>();
  /** Per session, the seq its next live record should have. */
  private readonly nextSeq = new Map<string, number>();
  private subscription: Subscription | undefined;
  private confirmed = false;
  /** Record batches parsed. */
  batches = 0;
  /** Messages on the subject that were not record batches (not ours to judge: counted and skipped). */
  unreadable = 0;
  /** Records seen a second time (left out), and records that never arrived (told as unreceived). */
  duplicates = 0;
  unreceived = 0;

  constructor(
    private readonly bus: Bus,
    private readonly log: Log = silentLog,
    /** Only these links' records (a gateway's own links); default every link's. */
    private readonly only?: Parameters<Bus['names']['recFilter']>[0],
  ) {}

  /**
   * Adds a consumer, and what it does with records that never arrived (`unreceived`: it
   * should tell its readers); returns the function that removes it.
   */
  add(consumer: BatchConsumer, unreceived?: UnreceivedConsumer): () => void {
    this.consumers.set(consumer, unreceived);
    if (!this.subscription) this.open();
    return () => {
      if (!this.consumers.delete(consumer)) return;
      if (this.consumers.size === 0) this.close();
    };
  }

  get consumerCount(): number {
    return this.consumers.size;
  }

  /** True once the server has confirmed the subscription: records published from now on arrive. */
  get subscribed(): boolean {
    return this.confirmed;
  }

  /** Resolves once the server has seen the subscription (records published after it arrive). */
  async flush(): Promise<void> {
    await this.bus.nc.flush();
  }

  /** Ends the subscription and forgets every consumer (the server is closing). */
  stop(): void {
    this.consumers.clear();
    this.close();
  }

  private close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.confirmed = false;
    // A new subscription starts where the records are then: no gap against the old one.
    this.nextSeq.clear();
  }

  /**
   * The batch without the records seen already (undefined when none is left), after telling
   * the consumers of the records skipped since the session's last batch.
   */
  private inSequence(batch: RecordBatch): RecordBatch | undefined {
    const { records, session } = batch;
    const expected = this.nextSeq.get(session);
    const last = records[records.length - 1].seq;
    if (expected !== undefined) {
      if (last < expected) {
        this.duplicates += records.length;
        return undefined;
      }
      const first = records[0].seq;
      if (first < expected) {
        const fresh = records.filter((r) => r.seq >= expected);
        this.duplicates += records.length - fresh.length;
        batch = { ...batch, records: fresh };
      } else if (first > expected) {
        const gap: UnreceivedRecords = {
          protocol: batch.protocol,
          rig: batch.rig,
          link: batch.link,
          session,
          firstSeq: expected,
          records: first - expected,
        };
        this.unreceived += gap.records;
        this.log.warn(gap, 'live records never arrived from NATS; readers are told');
        for (const tell of this.consumers.values()) {
          try {
            tell?.(gap);
          } catch (err) {
            this.log.warn({ err }, 'a live record consumer failed');
          }
        }
      }
    }
    this.nextSeq.delete(session);
    if (batch.eos) return batch;
    this.nextSeq.set(session, last + 1);
    if (this.nextSeq.size > SESSIONS_KEPT) this.nextSeq.delete(this.nextSeq.keys().next().value as string);
    return batch;
  }

  private open(): void {
    const subscription = this.bus.nc.subscribe(this.bus.names.recFilter(this.only), {
      callback: (err, msg) => {
        if (err) {
          this.log.warn({ err }, 'live records subscription failed');
          return;
        }
        let batch: RecordBatch;
        try {
          batch = parseRecordMessage(this.bus.names, msg.subject, msg.headers, msg.data);
        } catch {
          this.unreadable++;
          return;
        }
        if (!Array.isArray(batch.records) || batch.records.length === 0) return;
        this.batches++;
        const fresh = this.inSequence(batch);
        if (!fresh) return;
        batch = fresh;
        for (const consumer of this.consumers.keys()) {
          try {
            consumer(batch);
          } catch (err) {
            this.log.warn({ err }, 'a live record consumer failed');
          }
        }
      },
    });
    this.subscription = subscription;
    this.bus.nc
      .flush()
      .then(() => {
        if (this.subscription === subscription) this.confirmed = true;
      })
      .catch(() => {});
  }
}
