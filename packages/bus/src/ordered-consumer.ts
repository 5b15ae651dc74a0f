import { AckPolicy, type ConsumerMessages, DeliverPolicy, type JsMsg, ReplayPolicy } from '@nats-io/jetstream';
import { ensureDurable } from './consumers.js';
import type { Bus } from './types.js';

const ns = (ms: number) => ms * 1_000_000;

export interface OrderedConsumerOptions {
  stream: string;
  /** Durable name: the consumer outlives the worker, so another worker resumes where it stopped. */
  durable: string;
  filterSubject: string;
  /** How long a delivered message may stay unacked before it is delivered again, ms. */
  ackWaitMs?: number;
  /** Delay before a message whose handler failed is delivered again, ms. */
  retryDelayMs?: number;
}

export interface OrderedConsumerHandle {
  /** Stops taking messages; resolves when the handler in flight has finished. */
  stop(): Promise<void>;
  /** Settles when the loop ends (stopped, or the consumer is gone). */
  readonly done: Promise<void>;
}

/**
 * Creates (or updates) a durable pull consumer that delivers one message at a time
 * (max_ack_pending 1): a message is delivered only after the previous one was acked, and a
 * message that was not acked comes back before any later one. That is what keeps a link's
 * chunks in order across worker crashes.
 */
export async function ensureOrderedConsumer(bus: Bus, options: OrderedConsumerOptions): Promise<void> {
  // The gateway may have made it first, with the default ack wait: this one's settings win.
  await ensureDurable(
    bus,
    options.stream,
    {
      durable_name: options.durable,
      filter_subject: options.filterSubject,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      replay_policy: ReplayPolicy.Instant,
      max_ack_pending: 1,
      ack_wait: ns(options.ackWaitMs ?? 5000),
      max_deliver: -1,
    },
    'update',
  );
}

/**
 * Runs `handler` on each message in stream order and acks only after its promise resolves.
 * A rejected handler naks the message (with a delay), which is then delivered again first.
 */
export async function consumeInOrder(
  bus: Bus,
  options: OrderedConsumerOptions,
  handler: (msg: JsMsg) => Promise<void>,
  onError: (err: unknown, msg: JsMsg) => void = () => {},
  /** Called when the loop ends without `stop()` (the connection closed, the consumer was deleted). */
  onEnd: (err: unknown) => void = () => {},
): Promise<OrderedConsumerHandle> {
  await ensureOrderedConsumer(bus, options);
  const consumer = await bus.js.consumers.get(options.stream, options.durable);
  // One message is delivered at a time (max_ack_pending 1) whatever the pull asks for; asking
  // for a few at once saves a pull request per message.
  let messages: ConsumerMessages | undefined = await consumer.consume({ max_messages: 8 });
  let stopping = false;
  const retryDelay = options.retryDelayMs ?? 500;
  const loop = async () => {
    for await (const msg of messages!) {
      if (stopping) break;
      // Keep the message ours while a slow handler runs.
      const keepAlive = setInterval(() => msg.working(), Math.max(500, (options.ackWaitMs ?? 5000) / 2));
      try {
        await handler(msg);
        // A plain ack, not one confirmed: an ack that is lost brings the message back after
        // the ack wait, and a handler that has done it already skips it (the decoder's
        // checkpoint says so); waiting for the confirmation cost a round trip per message.
        msg.ack();
      } catch (err) {
        onError(err, msg);
        msg.nak(retryDelay);
      } finally {
        clearInterval(keepAlive);
      }
      if (stopping) break;
    }
  };
  // The loop never rejects: an iterator that fails (its connection closed under it) is an end.
  const done = loop().then(
    () => {
      if (!stopping) onEnd(undefined);
    },
    (err: unknown) => {
      if (!stopping) onEnd(err);
    },
  );
  return {
    done,
    stop: async () => {
      stopping = true;
      const m = messages;
      messages = undefined;
      if (m) await m.close().catch(() => {});
      await done.catch(() => {});
      // The last ack on its way before whoever takes the consumer over asks for messages.
      await bus.nc.flush().catch(() => {});
    },
  };
}
