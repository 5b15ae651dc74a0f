import type { Subscription } from '@nats-io/transport-node';
import { type Bus, parseRecordBatch } from '@tracehub/bus';
import type { RecordBatch } from '@tracehub/contracts';

/** Takes one batch of live records; must not wait for anything (it runs in the NATS callback). */
export type BatchConsumer = (batch: RecordBatch) => void;

/**
 * The bridge's one core-NATS subscription to the live records (`rec.>`), opened while at
 * least one endpoint or listener wants live records and closed when the last one leaves.
 * Each batch is parsed once and handed to every consumer in arrival order, which is the
 * order of the records within each link.
 */
export class LiveRecordFeed {
  private readonly consumers = new Set<BatchConsumer>();
  private subscription: Subscription | undefined;
  batches = 0;

  constructor(
    private readonly bus: Bus,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /** Adds a consumer; returns the function that removes it. */
  add(consumer: BatchConsumer): () => void {
    this.consumers.add(consumer);
    if (!this.subscription) this.open();
    return () => {
      this.consumers.delete(consumer);
      if (this.consumers.size === 0) this.close();
    };
  }

  /** Resolves once the server has seen the subscription (records published after it arrive). */
  async flush(): Promise<void> {
    await this.bus.nc.flush();
  }

  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
  }

  private open(): void {
    this.subscription = this.bus.nc.subscribe(this.bus.names.recFilter(), {
      callback: (err, msg) => {
        if (err) return this.onError(err);
        let batch: RecordBatch;
        try {
          batch = parseRecordBatch(msg.data);
        } catch {
          return; // the decoders own the subject's contents; a bad message is not ours to judge
        }
        if (!Array.isArray(batch.records) || batch.records.length === 0) return;
        this.batches++;
        for (const consumer of this.consumers) {
          try {
            consumer(batch);
          } catch (error) {
            this.onError(error);
          }
        }
      },
    });
  }
}
