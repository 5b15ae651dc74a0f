import type { StreamFill } from '@tracehub/bus';
import type { ServiceMetrics } from './metrics.js';

/** The gauges of a stream's fill: name, help, and the value from the stream's state. */
const STREAM_GAUGES: ReadonlyArray<readonly [name: string, help: string, value: (l: StreamFill) => number]> = [
  ['stream_bytes', 'bytes a stream holds (not yet taken by every consumer)', (l) => l.bytes],
  ['stream_messages', 'messages a stream holds', (l) => l.messages],
  ['stream_max_bytes', 'bytes at which a stream refuses new messages (-1: no limit)', (l) => l.maxBytes],
  [
    'stream_fill_ratio',
    'bytes held over max bytes; at 1 the stream refuses publishes',
    (l) => (l.maxBytes > 0 ? l.bytes / l.maxBytes : 0),
  ],
];

/**
 * `tracehub_stream_bytes`, `_messages`, `_max_bytes` and `_fill_ratio` per stream, read when
 * scraped: how close the raw and record streams are to refusing publishes.
 */
export function streamLevelMetrics(metrics: ServiceMetrics, read: () => Promise<StreamFill[]>): void {
  let last: Promise<StreamFill[]> | undefined;
  // The four gauges are collected one after the other in one scrape: read the streams once.
  const levels = () => {
    last ??= read()
      .catch(() => [])
      .finally(() => setTimeout(() => (last = undefined), 100).unref());
    return last;
  };
  for (const [name, help, value] of STREAM_GAUGES) {
    metrics.sampledGauge({
      name,
      help,
      labelNames: ['stream'],
      samples: async () => (await levels()).map((l) => [{ stream: l.stream }, value(l)] as const),
    });
  }
}
