import { AckPolicy, type ConsumerMessages, DeliverPolicy } from '@nats-io/jetstream';
import type { Bus } from './connect.js';

const ns = (ms: number) => ms * 1_000_000;

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
  const config = {
    durable_name: names.storageConsumer,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ns(options.ackWaitMs),
    max_ack_pending: options.maxAckPending,
    max_deliver: -1,
  };
  // A copy started with other settings updates the shared consumer.
  await bus.jsm.consumers.add(names.recStream, config).catch(async (err: unknown) => {
    const existing = await bus.jsm.consumers.info(names.recStream, config.durable_name).catch(() => undefined);
    if (!existing) throw err;
    const { ack_wait, max_ack_pending } = config;
    await bus.jsm.consumers.update(names.recStream, config.durable_name, { ack_wait, max_ack_pending });
  });
  const consumer = await bus.js.consumers.get(names.recStream, names.storageConsumer);
  return consumer.consume({ max_messages: options.pullMessages });
}
