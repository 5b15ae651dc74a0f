import type { Gateway, PublisherStats } from '@tracehub/link';
import { LINK_LABELS, linkLabels, type ServiceMetrics } from '@tracehub/service-kit';

type PublisherCount = readonly [name: string, help: string, count: (stats: PublisherStats) => number];

/** Counts each link's publisher keeps, exported as counters. */
const PUBLISHER_COUNTS: readonly PublisherCount[] = [
  ['gateway_bytes_read_total', 'bytes read from the link', (s) => s.bytesIn],
  [
    'gateway_bytes_dropped_total',
    'bytes dropped (oldest first, reported in th-lost) because NATS was away or the raw stream full longer than the buffer lasts',
    (s) => s.bytesDropped,
  ],
  [
    'gateway_publish_refused_total',
    'raw chunk publishes refused because the raw stream was full (decoders or storage behind)',
    (s) => s.publishRefused,
  ],
  [
    'gateway_publish_failures_total',
    'raw chunk publishes that failed because NATS did not answer',
    (s) => s.publishFailures,
  ],
];

/** What the gateway is told after every chunk JetStream acknowledged: the link's and the chunk's. */
export type OnPublished = (link: Gateway['link'], published: { bytes: number; ms: number }) => void;

/**
 * The gateway's series, per link. What the publishers count is read from them when scraped,
 * so it moves while NATS is away too; what JetStream acknowledged is counted as it comes
 * (the returned `onPublished`). `gateways` may be filled after this call.
 */
export function gatewayMetrics(metrics: ServiceMetrics, gateways: readonly Gateway[]): OnPublished {
  const perLink = (value: (stats: PublisherStats) => number) => () =>
    gateways.map((g) => [linkLabels(g.link), value(g.publisher.stats)] as const);
  for (const [name, help, count] of PUBLISHER_COUNTS) {
    metrics.sampledCounter({ name, help, labelNames: LINK_LABELS, samples: perLink(count) });
  }
  metrics.sampledGauge({
    name: 'gateway_queued_bytes',
    help: 'bytes waiting for NATS',
    labelNames: LINK_LABELS,
    samples: perLink((s) => s.queuedBytes),
  });
  metrics.gauge({
    name: 'gateway_links_buffering',
    help: 'links whose chunks are being refused or failing, so that they buffer (and past the buffer, drop)',
    collect() {
      this.set(gateways.filter((g) => g.publisher.stats.holding).length);
    },
  });
  metrics.sampledCounter({
    name: 'gateway_connections_not_taken_total',
    help: 'tcp-listen connections refused, replaced by a newer one, or closed for sending nothing',
    labelNames: [...LINK_LABELS, 'event'],
    samples: () =>
      gateways.flatMap((g) =>
        Object.entries(g.publisher.stats.connections).map(
          ([event, n]) => [{ ...linkLabels(g.link), event }, n] as const,
        ),
      ),
  });
  const bytesOut = metrics.counter({
    name: 'gateway_bytes_published_total',
    help: 'bytes acknowledged by JetStream',
    labelNames: LINK_LABELS,
  });
  const chunks = metrics.counter({
    name: 'gateway_chunks_published_total',
    help: 'raw chunks acknowledged',
    labelNames: LINK_LABELS,
  });
  const publishSeconds = metrics.histogram({
    name: 'gateway_publish_seconds',
    help: 'time from publish to JetStream ack',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
  });
  return (link, { bytes, ms }) => {
    const labels = linkLabels(link);
    bytesOut.inc(labels, bytes);
    chunks.inc(labels);
    publishSeconds.observe(ms / 1000);
  };
}
