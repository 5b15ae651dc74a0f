import type { Subscription } from '@nats-io/transport-node';
import { type Bus, parseRecordBatch } from '@tracehub/bus';
import type { RecordBatch } from '@tracehub/contracts';

/**
 * Takes one batch of live records. It runs in the NATS callback, so it must only filter,
 * encode and push into an {@link Outlet}: never wait, never write to a transport.
 */
export type BatchConsumer = (batch: RecordBatch) => void;

export interface RecordFeedLog {
  warn(obj: object, msg: string): void;
}

/**
 * The process's one core-NATS subscription to the live records (`rec.>`): open while at least
 * one consumer wants live records, closed when the last one leaves. Each batch is parsed once
 * and handed to every consumer in arrival order (the order of the records within each link).
 * Consumers push into bounded outlets, so the subscription is always read as fast as NATS
 * delivers and the server never sees this process as a slow consumer.
 */
export class RecordFeed {
  private readonly consumers = new Set<BatchConsumer>();
  private subscription: Subscription | undefined;
  private confirmed = false;
  /** Record batches parsed. */
  batches = 0;
  /** Messages on the subject that were not record batches (not ours to judge: counted and skipped). */
  unreadable = 0;

  constructor(
    private readonly bus: Bus,
    private readonly log: RecordFeedLog = { warn() {} },
  ) {}

  /** Adds a consumer; returns the function that removes it. */
  add(consumer: BatchConsumer): () => void {
    this.consumers.add(consumer);
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
  }

  private open(): void {
    const subscription = this.bus.nc.subscribe(this.bus.names.recFilter(), {
      callback: (err, msg) => {
        if (err) {
          this.log.warn({ err }, 'live records subscription failed');
          return;
        }
        let batch: RecordBatch;
        try {
          batch = parseRecordBatch(msg.data);
        } catch {
          this.unreadable++;
          return;
        }
        if (!Array.isArray(batch.records) || batch.records.length === 0) return;
        this.batches++;
        for (const consumer of this.consumers) {
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
