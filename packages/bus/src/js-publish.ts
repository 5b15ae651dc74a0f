import type { PubAck } from '@nats-io/jetstream';
import { createInbox, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/** How long a publish waits for JetStream's answer before it fails (and the caller tries again), ms. */
const ANSWER_TIMEOUT_MS = 5000;

/** A publish JetStream refused: its error code (10077: the stream is full) and description. */
export class JetStreamPublishError extends Error {
  override name = 'JetStreamPublishError';
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

/** No answer came in time: NATS away, or no stream takes the subject. */
export class JetStreamPublishTimeoutError extends Error {
  override name = 'JetStreamPublishTimeoutError';
}

interface Waiting {
  resolve(ack: PubAck): void;
  reject(err: Error): void;
  sentAt: number;
}

/**
 * Publishes to JetStream with every answer coming to one subscription of this connection,
 * matched by a token in its reply subject, and one timer for all answers outstanding. The
 * client's own `js.publish` makes a request of each message: a reply entry, a timer, and an
 * `Error` with its stack trace built for every request that succeeds (nats.js 3.4 rejects the
 * settled promise with a new one): 5-8% of a gateway's and a decoder's CPU samples in a fleet
 * bench run, where links publish a few hundred small chunks a second.
 */
class JetStreamPublisher {
  private readonly prefix = createInbox();
  private readonly waiting = new Map<string, Waiting>();
  private readonly sweep: NodeJS.Timeout;
  private next = 0;

  constructor(private readonly nc: NatsConnection) {
    nc.subscribe(`${this.prefix}.*`, { callback: (_err, msg) => this.answer(msg) });
    this.sweep = setInterval(() => this.expire(), 250);
    this.sweep.unref();
    void nc.closed().then(() => {
      clearInterval(this.sweep);
      for (const w of this.waiting.values()) w.reject(new JetStreamPublishTimeoutError('the NATS connection closed'));
      this.waiting.clear();
    });
  }

  publish(subject: string, data: Uint8Array, headers: MsgHdrs): Promise<PubAck> {
    const token = (this.next++).toString(36);
    return new Promise<PubAck>((resolve, reject) => {
      this.waiting.set(token, { resolve, reject, sentAt: performance.now() });
      try {
        this.nc.publish(subject, data, { reply: `${this.prefix}.${token}`, headers });
      } catch (err) {
        this.waiting.delete(token);
        reject(err as Error);
      }
    });
  }

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.prefix.length + 1);
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    this.waiting.delete(token);
    // A 503 status without data: no stream listens on the subject.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      waiting.reject(new JetStreamPublishError('no stream takes the subject (no responders)', 503));
      return;
    }
    let answer: {
      stream?: string;
      seq?: number;
      duplicate?: boolean;
      error?: { err_code?: number; code?: number; description?: string };
    };
    try {
      answer = msg.json();
    } catch (err) {
      waiting.reject(new JetStreamPublishError(`JetStream answered what is not JSON: ${(err as Error).message}`, 0));
      return;
    }
    if (answer.error) {
      waiting.reject(
        new JetStreamPublishError(
          answer.error.description ?? 'refused',
          answer.error.err_code ?? answer.error.code ?? 0,
        ),
      );
      return;
    }
    waiting.resolve({
      stream: answer.stream ?? '',
      seq: answer.seq ?? 0,
      duplicate: answer.duplicate === true,
    } as PubAck);
  }

  private expire(): void {
    const deadline = performance.now() - ANSWER_TIMEOUT_MS;
    for (const [token, w] of this.waiting) {
      if (w.sentAt > deadline) continue;
      this.waiting.delete(token);
      w.reject(new JetStreamPublishTimeoutError(`no answer from JetStream within ${ANSWER_TIMEOUT_MS} ms`));
    }
  }
}

const publishers = new WeakMap<NatsConnection, JetStreamPublisher>();

/**
 * Publishes `data` to a JetStream stream and resolves with its acknowledgement; rejects with
 * `JetStreamPublishError` (its `code` is JetStream's: 10077 when the stream is full) or
 * `JetStreamPublishTimeoutError`. `headers` go as they are: a de-duplication id is the
 * caller's `Nats-Msg-Id` header.
 */
export function jetStreamPublish(
  nc: NatsConnection,
  subject: string,
  data: Uint8Array,
  headers: MsgHdrs,
): Promise<PubAck> {
  let publisher = publishers.get(nc);
  if (!publisher) publishers.set(nc, (publisher = new JetStreamPublisher(nc)));
  return publisher.publish(subject, data, headers);
}
