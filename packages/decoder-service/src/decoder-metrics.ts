import type { Bus } from '@tracehub/bus';
import { LINK_LABELS, linkLabels, type ServiceMetrics } from '@tracehub/service-kit';
import type { DecoderWorker } from './decoder-worker.js';
import type { ChunkDecoded, DecoderWorkerOptions } from './types.js';

type ChunkCount = readonly [name: string, help: string, count: (chunk: ChunkDecoded) => number];

/** What every decoded chunk adds to its link's counters. */
const CHUNK_COUNTS: readonly ChunkCount[] = [
  ['decoder_bytes_total', 'raw bytes decoded', (c) => c.bytes],
  ['decoder_chunks_total', 'raw chunks decoded', () => 1],
  ['decoder_records_total', 'records published', (c) => c.records],
  ['decoder_errors_total', 'error records', (c) => c.errors],
  ['decoder_gaps_total', 'sequence gaps', (c) => c.gaps],
  ['decoder_link_lost_bytes_total', 'bytes the gateway dropped', (c) => c.lostBytes],
];

/** The worker's callbacks that count decoded chunks and refused publishes, per link. */
export function chunkMetrics(metrics: ServiceMetrics): Pick<DecoderWorkerOptions, 'onChunk' | 'onRefused'> {
  const counters = CHUNK_COUNTS.map(([name, help, count]) => ({
    counter: metrics.counter({ name, help, labelNames: LINK_LABELS }),
    count,
  }));
  const latency = metrics.histogram({
    name: 'decoder_chunk_seconds',
    help: "time from taking a chunk to its records' publication (decode and publish; the checkpoint follows within DECODER_CHECKPOINT_MS)",
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  });
  const refused = metrics.counter({
    name: 'decoder_publish_refused_total',
    help: 'record publishes refused (reason full: the record stream is full) or failing (unavailable); the link holds its chunk and tries again',
    labelNames: [...LINK_LABELS, 'reason'],
  });
  return {
    onChunk: (chunk) => {
      const labels = linkLabels(chunk.link);
      for (const { counter, count } of counters) counter.inc(labels, count(chunk));
      latency.observe(chunk.totalMs / 1000);
    },
    onRefused: ({ link, full }) => refused.inc({ ...linkLabels(link), reason: full ? 'full' : 'unavailable' }),
  };
}

type WorkerGauge = readonly [name: string, help: string, value: (worker: DecoderWorker) => number];

const WORKER_GAUGES: readonly WorkerGauge[] = [
  ['decoder_links_held', 'links this worker holds', (w) => w.heldLinks().length],
  [
    'decoder_links_fair_share',
    'links this worker takes at most: the links of its protocols over the workers alive (decoder_workers_alive)',
    (w) => w.share.share,
  ],
  ['decoder_workers_alive', 'decoder workers of these protocols alive now', (w) => w.share.workers],
  [
    'decoder_links_held_back',
    'held links whose records the record stream refuses now (each holds its chunk and takes no more)',
    (w) => w.heldBackLinks().length,
  ],
];

/** The worker's share of the links and what waits on the ones it holds, read when scraped. */
export function workerMetrics(metrics: ServiceMetrics, bus: Bus, worker: DecoderWorker): void {
  for (const [name, help, value] of WORKER_GAUGES) {
    metrics.gauge({
      name,
      help,
      collect() {
        this.set(value(worker));
      },
    });
  }
  // Lag: what is still waiting on each held link's consumer.
  metrics.sampledGauge({
    name: 'decoder_pending_chunks',
    help: 'raw chunks waiting, per held link',
    labelNames: LINK_LABELS,
    samples: async () => {
      const pending = await Promise.all(
        worker.heldLinks().map(async (link) => {
          const info = await bus.jsm.consumers
            .info(bus.names.rawStream, bus.names.decoderConsumer(link))
            .catch(() => undefined);
          return info ? ([linkLabels(link), info.num_pending + info.num_ack_pending] as const) : undefined;
        }),
      );
      return pending.filter((sample) => sample !== undefined);
    },
  });
}
