import type { ConsumerMessages } from '@nats-io/jetstream';
import { ensureDurable, storageRecordConsumerConfig } from './consumers.js';
import type { Bus } from './types.js';

export interface StorageConsumerOptions {
  /** How long a delivered message may stay unacknowledged before it is delivered again, ms. */
  ackWaitMs: number;
  /** Messages delivered but not yet acknowledged, at most. */
  maxAckPending: number;
  /** Messages the client pulls ahead. */
  pullMessages: number;
}

/**
 * The storage service's durable consumer on the record stream (`busNames.storageConsumer`),
 * created or updated, and its messages. Every storage copy shares it: JetStream hands each
 * message to one of them, and delivers again what was not acknowledged in time.
 */
export async function consumeStorageRecords(bus: Bus, options: StorageConsumerOptions): Promise<ConsumerMessages> {
  const { names } = bus;
  // A copy started with other settings updates the shared consumer.
  await ensureDurable(
    bus,
    names.recStream,
    storageRecordConsumerConfig(bus, { ackWaitMs: options.ackWaitMs, maxAckPending: options.maxAckPending }),
    'update',
  );
  const consumer = await bus.js.consumers.get(names.recStream, names.storageConsumer);
  return consumer.consume({ max_messages: options.pullMessages });
}
