import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';

const PREFIX = 'tracehub_';

/**
 * The Prometheus registry of one process: default process/runtime metrics plus the
 * service's own, every series labelled `service`, every own metric named `tracehub_*`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();

  constructor(readonly service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
  }

  counter<L extends string = string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
    return new Counter({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  gauge<L extends string = string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
    return new Gauge({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  histogram<L extends string = string>(config: Omit<HistogramConfiguration<L>, 'registers'>): Histogram<L> {
    return new Histogram({ ...config, name: prefixed(config.name), registers: [this.registry] });
  }

  /** The exposition text for /metrics. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function prefixed(name: string): string {
  return name.startsWith(PREFIX) ? name : PREFIX + name;
}

/** One stream's size against its limit (what `streamFill` in `@tracehub/bus` reads). */
export interface StreamLevel {
  stream: string;
  bytes: number;
  messages: number;
  /** -1: no limit. */
  maxBytes: number;
}

/**
 * `tracehub_stream_bytes`, `_messages`, `_max_bytes` and `_fill_ratio` per stream, read when
 * scraped: how close the raw and record streams are to refusing publishes.
 */
export function streamLevelMetrics(metrics: ServiceMetrics, read: () => Promise<StreamLevel[]>): void {
  let last: Promise<StreamLevel[]> | undefined;
  // The four gauges are collected one after the other in one scrape: read the streams once.
  const levels = () => {
    last ??= read()
      .catch(() => [])
      .finally(() => setTimeout(() => (last = undefined), 100).unref());
    return last;
  };
  const gauge = (name: string, help: string, value: (l: StreamLevel) => number) =>
    metrics.gauge({
      name,
      help,
      labelNames: ['stream'],
      async collect() {
        for (const l of await levels()) this.set({ stream: l.stream }, value(l));
      },
    });
  gauge('stream_bytes', 'bytes a stream holds (not yet taken by every consumer)', (l) => l.bytes);
  gauge('stream_messages', 'messages a stream holds', (l) => l.messages);
  gauge('stream_max_bytes', 'bytes at which a stream refuses new messages (-1: no limit)', (l) => l.maxBytes);
  gauge('stream_fill_ratio', 'bytes held over max bytes; at 1 the stream refuses publishes', (l) =>
    l.maxBytes > 0 ? l.bytes / l.maxBytes : 0,
  );
}
