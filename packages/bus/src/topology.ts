import { DiscardPolicy, RetentionPolicy, StorageType, type StreamConfig } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { Bus } from './connect.js';

export interface TopologyLimits {
  /** How long raw chunks are kept, ms (the re-decode window). */
  rawMaxAgeMs: number;
  rawMaxBytes: number;
  /** How long decoded records are kept on the bus, ms (storage normally takes them at once). */
  recMaxAgeMs: number;
  recMaxBytes: number;
  /** JetStream de-duplication window, ms: a re-send within it is dropped. */
  duplicateWindowMs: number;
  /** Stream replicas (3 on a JetStream cluster). */
  replicas: number;
  /** How long a decoder's lease lives without refresh, ms. */
  leaseTtlMs: number;
}

export const defaultTopologyLimits: TopologyLimits = {
  rawMaxAgeMs: 7 * 24 * 3600_000,
  // JetStream reserves max_bytes of every stream against the server's store when the stream
  // is made, so these are modest; an installation sizes them to its disk.
  rawMaxBytes: 1024 ** 3,
  recMaxAgeMs: 24 * 3600_000,
  recMaxBytes: 1024 ** 3,
  duplicateWindowMs: 10 * 60_000,
  replicas: 1,
  leaseTtlMs: 3000,
};

const ns = (ms: number) => ms * 1_000_000;

/** Creates or updates the two streams and the two KV buckets of the bus contract. */
export async function ensureTopology(bus: Bus, limits: Partial<TopologyLimits> = {}): Promise<void> {
  const l = { ...defaultTopologyLimits, ...limits };
  const { names } = bus;
  await ensureStream(bus, {
    name: names.rawStream,
    subjects: [names.rawFilter()],
    max_age: ns(l.rawMaxAgeMs),
    max_bytes: l.rawMaxBytes,
    duplicate_window: ns(Math.min(l.duplicateWindowMs, l.rawMaxAgeMs)),
    num_replicas: l.replicas,
  });
  await ensureStream(bus, {
    name: names.recStream,
    subjects: [names.recFilter()],
    max_age: ns(l.recMaxAgeMs),
    max_bytes: l.recMaxBytes,
    duplicate_window: ns(Math.min(l.duplicateWindowMs, l.recMaxAgeMs)),
    num_replicas: l.replicas,
  });
  const kvm = new Kvm(bus.js);
  await kvm.create(names.decoderStateBucket, { history: 1, replicas: l.replicas });
  await kvm.create(names.leaseBucket, { history: 1, ttl: l.leaseTtlMs, replicas: l.replicas });
}

async function ensureStream(bus: Bus, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  const full: Partial<StreamConfig> & { name: string } = {
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    // Old data goes first: the newest trace is the one an engineer is looking at.
    discard: DiscardPolicy.Old,
    ...config,
  };
  try {
    await bus.jsm.streams.info(config.name);
  } catch {
    try {
      await bus.jsm.streams.add(full);
      return;
    } catch (err) {
      // Another service created it between our look and our add.
      if (!/already in use|exists/i.test((err as Error).message)) throw err;
    }
  }
  const { storage: _storage, retention: _retention, ...updatable } = full;
  await bus.jsm.streams.update(config.name, updatable);
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
    `KV_${names.decoderStateBucket}`,
    `KV_${names.leaseBucket}`,
  ]) {
    try {
      await bus.jsm.streams.delete(stream);
    } catch (err) {
      if (!/not found/i.test((err as Error).message)) throw err;
    }
  }
}
