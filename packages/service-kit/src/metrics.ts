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
