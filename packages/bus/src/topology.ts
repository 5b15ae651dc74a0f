import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig, type StreamInfo } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { bucketStream } from '@tracehub/contracts';
import { ensureDurable, nanos, storageRawConsumerConfig, storageRecordConsumerConfig } from './consumers.js';
import { isJetStreamNotReady } from './errors.js';
import type { Bus } from './types.js';

export interface TopologyLimits {
  /**
   * How long a raw chunk may wait for its consumers, ms; 0 (default): as long as it takes.
   * A chunk older than this is discarded by JetStream whether or not it was decoded and
   * stored, without a loss record: set it only where that is wanted.
   */
  rawMaxAgeMs: number;
  /** Bytes of raw chunks waiting for a decoder or storage; when reached, publishes are refused. */
  rawMaxBytes: number;
  /** The same for record messages waiting for storage, ms; 0 (default): as long as it takes. */
  recMaxAgeMs: number;
  /** Bytes of record messages waiting for storage; when reached, the decoders' publishes are refused. */
  recMaxBytes: number;
  /** JetStream de-duplication window, ms: a re-send within it is dropped. */
  duplicateWindowMs: number;
  /** Stream replicas (3 on a JetStream cluster). */
  replicas: number;
  /** How long a decoder's lease lives without refresh, ms. */
  leaseTtlMs: number;
  /**
   * How long to keep trying while JetStream is not ready, ms: a cluster whose nodes are still
   * starting has no meta leader yet and answers its API with timeouts or "temporarily
   * unavailable" for a few seconds.
   */
  readyTimeoutMs: number;
}

export const defaultTopologyLimits: TopologyLimits = {
  rawMaxAgeMs: 0,
  // JetStream reserves max_bytes of every stream against the server's store when the stream
  // is made, so these are modest; an installation sizes them to its disk (the README says
  // how long an outage each size rides out).
  rawMaxBytes: 1024 ** 3,
  recMaxAgeMs: 0,
  recMaxBytes: 1024 ** 3,
  duplicateWindowMs: 10 * 60_000,
  replicas: 1,
  // Six seconds: with 3 s (refreshes every second, decoding stopped with under a third left) a
  // decoder whose event loop lagged 1.3-2 s behind 256 links on 2 cores lost 150 leases in a
  // 30 s run, and each link lost was decoded again from its checkpoint. A decoder that dies
  // leaves its links for at most this long; one that stops gives them back at once.
  leaseTtlMs: 6000,
  readyTimeoutMs: 60_000,
};

/**
 * Creates or updates the two streams, storage's durable consumers on them, and the two KV
 * buckets of the bus contract.
 *
 * Both streams keep a message until every consumer that wants it has acknowledged it
 * (interest retention) and refuse new messages when full (discard new): nothing is
 * discarded on its own, a full stream pushes back on the stage before it. Storage's
 * consumers are made here, so that no message is published before someone wants it.
 *
 * While JetStream is not ready (a cluster still electing its leader) it tries again, every
 * half second, for up to `readyTimeoutMs`.
 */
export async function ensureTopology(bus: Bus, limits: Partial<TopologyLimits> = {}): Promise<void> {
  const l = { ...defaultTopologyLimits, ...limits };
  const deadline = Date.now() + l.readyTimeoutMs;
  for (;;) {
    try {
      await applyTopology(bus, l);
      return;
    } catch (err) {
      if (!isJetStreamNotReady(err) || Date.now() >= deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function applyTopology(bus: Bus, l: TopologyLimits): Promise<void> {
  const { names } = bus;
  for (const stream of [
    { name: names.rawStream, subject: names.rawFilter(), maxAgeMs: l.rawMaxAgeMs, maxBytes: l.rawMaxBytes },
    { name: names.recStream, subject: names.recFilter(), maxAgeMs: l.recMaxAgeMs, maxBytes: l.recMaxBytes },
  ]) {
    await ensureStream(bus, {
      name: stream.name,
      subjects: [stream.subject],
      max_age: nanos(stream.maxAgeMs),
      max_bytes: stream.maxBytes,
      // JetStream wants the de-duplication window no longer than the max age.
      duplicate_window: nanos(
        stream.maxAgeMs > 0 ? Math.min(l.duplicateWindowMs, stream.maxAgeMs) : l.duplicateWindowMs,
      ),
      num_replicas: l.replicas,
    });
  }
  await ensureDurable(bus, names.rawStream, storageRawConsumerConfig(bus), 'create');
  await ensureDurable(bus, names.recStream, storageRecordConsumerConfig(bus), 'create');
  const kvm = new Kvm(bus.js);
  await ensureBucket(bus, kvm, names.decoderStateBucket, { history: 1, replicas: l.replicas });
  await ensureBucket(bus, kvm, names.leaseBucket, { history: 1, ttl: l.leaseTtlMs, replicas: l.replicas });
}

/**
 * Makes a KV bucket, or leaves one that exists as it is (its replicas may differ from ours),
 * except that reads go to its leader. Leases and checkpoints are read to decide who owns a
 * link and where its decoding resumes: a direct get may be answered by a follower that has
 * not caught up (a node just back from a restart), and a stale checkpoint would decode
 * chunks from an old state under ids already taken.
 */
async function ensureBucket(
  bus: Bus,
  kvm: Kvm,
  name: string,
  config: { history: number; ttl?: number; replicas: number },
) {
  try {
    // Opens a bucket that exists without changing it.
    await kvm.create(name, { ...config, allow_direct: false });
  } catch (err) {
    if (!/already in use|exists/i.test((err as Error).message)) throw err;
  }
  const stream = bucketStream(name);
  const info = await bus.jsm.streams.info(stream);
  if (info.config.allow_direct) await bus.jsm.streams.update(stream, { ...info.config, allow_direct: false });
}

async function ensureStream(bus: Bus, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  const full: Partial<StreamConfig> & { name: string } = {
    storage: StorageType.File,
    retention: RetentionPolicy.Interest,
    // A full stream refuses: what it holds is not yet decoded or stored.
    discard: DiscardPolicy.New,
    ...config,
  };
  let existing: StreamInfo | undefined;
  try {
    existing = await bus.jsm.streams.info(config.name);
  } catch (err) {
    if (isJetStreamNotReady(err)) throw err;
    try {
      await bus.jsm.streams.add(full);
      return;
    } catch (err) {
      // Another service created it between our look and our add.
      if (!/already in use|exists/i.test((err as Error).message)) throw err;
    }
  }
  if (existing && existing.config.retention !== full.retention) {
    await replaceOlderStream(bus, existing, full);
    return;
  }
  // An existing stream keeps its replicas: scaling them is an operator's decision, and a
  // process started without TRACEHUB_STREAM_REPLICAS (a CLI replay) must not undo it.
  const { storage: _storage, retention: _retention, ...updatable } = full;
  await bus.jsm.streams.update(config.name, {
    ...updatable,
    num_replicas: existing?.config.num_replicas ?? updatable.num_replicas,
  });
}

export class StreamUpgradeError extends Error {
  override name = 'StreamUpgradeError';
}

/**
 * A stream made by an earlier version keeps messages by limits alone (and discards the oldest
 * when full), and JetStream cannot change a stream's retention. When every consumer of it
 * has taken and acknowledged everything, nothing in it is still needed: it is made again
 * with the current rules. Otherwise the services that read it must drain it first.
 */
async function replaceOlderStream(
  bus: Bus,
  existing: StreamInfo,
  wanted: Partial<StreamConfig> & { name: string },
): Promise<void> {
  const name = wanted.name;
  const waiting: string[] = [];
  for await (const c of await bus.jsm.consumers.list(name)) {
    if (c.num_pending > 0 || c.num_ack_pending > 0) waiting.push(`${c.name} (${c.num_pending + c.num_ack_pending})`);
  }
  if (waiting.length > 0 || (existing.state.consumer_count === 0 && existing.state.messages > 0)) {
    throw new StreamUpgradeError(
      `stream ${name} has ${existing.config.retention} retention from an earlier version and holds messages not yet consumed` +
        `${waiting.length > 0 ? ` by ${waiting.join(', ')}` : ''}: run the previous version until they are, or delete the stream (nats stream rm ${name}) to give them up`,
    );
  }
  await bus.jsm.streams.delete(name).catch((err: Error) => {
    if (!/not found/i.test(err.message)) throw err;
  });
  try {
    await bus.jsm.streams.add(wanted);
  } catch (err) {
    // Another service replaced it at the same time.
    if (!/already in use|exists/i.test((err as Error).message)) throw err;
  }
}

/** A stream's bytes and limit, for fill metrics. */
export interface StreamFill {
  stream: string;
  bytes: number;
  messages: number;
  /** -1: no limit. */
  maxBytes: number;
}

/** How full the raw and record streams are (one entry per stream that exists). */
export async function streamFill(bus: Bus): Promise<StreamFill[]> {
  const out: StreamFill[] = [];
  for (const stream of [bus.names.rawStream, bus.names.recStream]) {
    const info = await bus.jsm.streams.info(stream).catch(() => undefined);
    if (info)
      out.push({ stream, bytes: info.state.bytes, messages: info.state.messages, maxBytes: info.config.max_bytes });
  }
  return out;
}

/**
 * Deletes what `ensureTopology` made for this bus's names: both streams and both KV buckets
 * (a bucket is the stream `KV_<bucket>`). For tests and for taking an installation down; a
 * piece that is already gone is skipped.
 */
export async function removeTopology(bus: Bus): Promise<void> {
  const { names } = bus;
  for (const stream of [
    names.rawStream,
    names.recStream,
    bucketStream(names.decoderStateBucket),
    bucketStream(names.leaseBucket),
  ]) {
    try {
      await bus.jsm.streams.delete(stream);
    } catch (err) {
      if (!/not found/i.test((err as Error).message)) throw err;
    }
  }
}
