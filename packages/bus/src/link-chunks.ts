import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { type MsgHdrs, headers as natsHeaders } from '@nats-io/transport-node';
import type { LinkAddress } from '@tracehub/contracts';
import { DECODER_CHUNKS_IN_FLIGHT, decoderConsumerConfig, ensureDurable } from './consumers.js';
import type { Bus } from './types.js';

export interface LinkChunksOptions {
  /** How long a delivered chunk may stay unacknowledged before it is delivered again, ms. */
  ackWaitMs?: number;
  /** Chunks delivered and not yet acknowledged, at most. */
  maxInFlight?: number;
}

/** A link's chunks being delivered to one decoder. */
export interface LinkChunksHandle {
  /** Where the link's consumer stood when delivery began: every chunk up to this stream sequence acknowledged. */
  readonly start: { ackFloorSeq: number };
  /** Stops delivery; chunks delivered and not acknowledged stay the holder's to ack or nak. */
  stop(): Promise<void>;
  /** Settles when delivery ends on its own (the connection closed, the consumer was deleted). */
  readonly ended: Promise<unknown>;
}

/**
 * Delivers a link's raw chunks to `onChunk` as they come, in stream order, without
 * acknowledging them: the caller acknowledges each once it is safe to (its decoding
 * checkpointed). Chunks a previous holder left unacknowledged come again after their ack wait,
 * possibly after later ones: `start` says whether there are any, and `nextChunkFrom` finds the
 * chunk that comes next.
 */
export async function consumeLinkChunks(
  bus: Bus,
  link: LinkAddress,
  options: LinkChunksOptions,
  onChunk: (msg: JsMsg) => void,
): Promise<LinkChunksHandle> {
  const config = decoderConsumerConfig(bus, link, options.ackWaitMs, options.maxInFlight);
  // The gateway may have made it first, with the defaults: this reader's settings win.
  await ensureDurable(bus, bus.names.rawStream, config, 'update');
  const consumer = await bus.js.consumers.get(bus.names.rawStream, config.durable_name);
  const info = await consumer.info(true);
  const messages: ConsumerMessages = await consumer.consume({
    max_messages: options.maxInFlight ?? DECODER_CHUNKS_IN_FLIGHT,
    callback: onChunk,
  });
  let stopping = false;
  const ended = messages.closed().then(
    (err) => (stopping ? undefined : (err ?? new Error('delivery ended'))),
    (err: unknown) => (stopping ? undefined : err),
  );
  return {
    start: { ackFloorSeq: info.ack_floor.stream_seq },
    ended,
    stop: async () => {
      stopping = true;
      await messages.close().catch(() => {});
      await ended;
    },
  };
}

/** A raw chunk as the stream holds it. */
export interface StoredChunk {
  seq: number;
  headers: MsgHdrs;
  data: Uint8Array;
}

/**
 * The link's first raw chunk at or after `fromSeq` that the stream still holds, or undefined
 * when there is none. One request; used to tell whether a chunk delivered is the one that
 * comes next when deliveries may be out of order (after another holder died), and to read
 * the one that does.
 */
export async function nextChunkFrom(bus: Bus, link: LinkAddress, fromSeq: number): Promise<StoredChunk | undefined> {
  const subject = bus.names.rawSubject(link.protocol, link.rig, link.link);
  const reply = await bus.nc.request(
    `$JS.API.STREAM.MSG.GET.${bus.names.rawStream}`,
    JSON.stringify({ seq: Math.max(1, fromSeq), next_by_subj: subject }),
    { timeout: 5000 },
  );
  const answer = JSON.parse(new TextDecoder().decode(reply.data)) as {
    message?: { seq: number; hdrs?: string; data?: string };
    error?: { code: number; description: string };
  };
  if (answer.error) {
    if (answer.error.code === 404) return undefined;
    throw new Error(`could not look up the next chunk of ${subject}: ${answer.error.description}`);
  }
  if (!answer.message) return undefined;
  const data = answer.message.data ? Buffer.from(answer.message.data, 'base64') : new Uint8Array(0);
  return { seq: answer.message.seq, headers: parseHeaderBlock(answer.message.hdrs), data };
}

/** A NATS header block (`NATS/1.0\r\nName: value\r\n...`, base64) as headers. */
function parseHeaderBlock(base64: string | undefined): MsgHdrs {
  const out = natsHeaders();
  if (!base64) return out;
  const lines = Buffer.from(base64, 'base64').toString('utf8').split('\r\n').slice(1);
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) out.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  return out;
}
