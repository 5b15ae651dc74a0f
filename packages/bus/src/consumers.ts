import { AckPolicy, type ConsumerConfig, DeliverPolicy, ReplayPolicy } from '@nats-io/jetstream';
import type { LinkAddress } from '@tracehub/contracts';
import type { Bus } from './types.js';

/** Milliseconds as the nanoseconds JetStream's configurations take. */
export const nanos = (ms: number) => ms * 1_000_000;

/**
 * The durable consumers that hold the streams' data. Both streams keep a message only while
 * a consumer still needs it (interest retention), and JetStream stores nothing a consumer
 * does not ask for: a consumer that is missing when a message is published means that
 * message is gone at once. So every publisher makes sure the consumers after it exist before
 * it publishes (`ensureTopology` makes storage's two, the gateway a link's decoder consumer).
 */
export type DurableConfig = Partial<ConsumerConfig> & { durable_name: string };

/**
 * Chunks of a link delivered to its decoder and not yet acknowledged, at most: the decoder
 * acknowledges them once a checkpoint covers them, a few times a second, not one by one.
 */
export const DECODER_CHUNKS_IN_FLIGHT = 64;

/**
 * A link's decoding on the raw stream (shared by every decoder worker, used by one at a time):
 * its chunks in stream order, up to `maxInFlight` delivered ahead of their acknowledgement.
 */
export function decoderConsumerConfig(
  bus: Bus,
  link: LinkAddress,
  ackWaitMs = 5000,
  maxInFlight = DECODER_CHUNKS_IN_FLIGHT,
): DurableConfig {
  return {
    durable_name: bus.names.decoderConsumer(link),
    filter_subject: bus.names.rawSubject(link.protocol, link.rig, link.link),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    max_ack_pending: maxInFlight,
    ack_wait: nanos(ackWaitMs),
    max_deliver: -1,
  };
}

/** How a storage consumer is read: its ack wait, and how many messages may be delivered but unacked. */
export interface StorageConsumerLimits {
  ackWaitMs?: number;
  maxAckPending?: number;
}

/** Storage's consumer on the record stream (every record subject). */
export function storageRecordConsumerConfig(bus: Bus, limits: StorageConsumerLimits = {}): DurableConfig {
  return storageConsumerConfig(bus.names.storageConsumer, limits.maxAckPending ?? 256, limits.ackWaitMs);
}

/** Storage's consumer on the raw stream (it keeps the link's bytes). */
export function storageRawConsumerConfig(bus: Bus, limits: StorageConsumerLimits = {}): DurableConfig {
  return storageConsumerConfig(bus.names.storageRawConsumer, limits.maxAckPending ?? 1024, limits.ackWaitMs);
}

/** A storage consumer: every message of its stream, each acked once stored, delivered again until it is. */
function storageConsumerConfig(durableName: string, maxAckPending: number, ackWaitMs = 30_000): DurableConfig {
  return {
    durable_name: durableName,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: maxAckPending,
    max_deliver: -1,
  };
}

/**
 * Makes the durable consumer exist. `mode: 'create'` leaves an existing one as it is (a
 * publisher making sure of its readers, with defaults); `'update'` also sets its ack wait and
 * max ack pending to these (the reader itself, with its own settings).
 */
export async function ensureDurable(
  bus: Bus,
  stream: string,
  config: DurableConfig,
  mode: 'create' | 'update',
): Promise<void> {
  const existing = await bus.jsm.consumers.info(stream, config.durable_name).catch(() => undefined);
  if (!existing) {
    try {
      await bus.jsm.consumers.add(stream, config);
      return;
    } catch (err) {
      // Another service may have made it between our look and our add.
      if (!(await bus.jsm.consumers.info(stream, config.durable_name).catch(() => undefined))) throw err;
    }
  }
  if (mode === 'create') return;
  const current = existing?.config ?? (await bus.jsm.consumers.info(stream, config.durable_name)).config;
  if (current.ack_wait === config.ack_wait && current.max_ack_pending === config.max_ack_pending) return;
  await bus.jsm.consumers.update(stream, config.durable_name, {
    ack_wait: config.ack_wait,
    max_ack_pending: config.max_ack_pending,
  });
}

/** The consumers a link's raw chunks need before the first is published: its decoding and storage's. */
export async function ensureLinkConsumers(bus: Bus, link: LinkAddress): Promise<void> {
  await ensureDurable(bus, bus.names.rawStream, decoderConsumerConfig(bus, link), 'create');
  await ensureDurable(bus, bus.names.rawStream, storageRawConsumerConfig(bus), 'create');
}

/** The consumer record messages need before they are published: storage's. */
export async function ensureRecordConsumers(bus: Bus): Promise<void> {
  await ensureDurable(bus, bus.names.recStream, storageRecordConsumerConfig(bus), 'create');
}
