import type { LinkAddress } from '@tracehub/contracts';
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

/** The labels of a link's series. */
export const LINK_LABELS = ['protocol', 'rig', 'link'] as const;

/** A link's values of `LINK_LABELS`. */
export function linkLabels(link: LinkAddress): Record<(typeof LINK_LABELS)[number], string> {
  return { protocol: link.protocol, rig: link.rig, link: link.link };
}

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

  /**
   * A counter whose totals are kept elsewhere (a publisher's own counts, an endpoint's
   * status), read when scraped: a series per sample, at its total.
   */
  sampledCounter<L extends string = string>({ samples, ...config }: SampledConfiguration<L>): Counter<L> {
    return this.counter<L>({
      ...config,
      collect: collectSamples(samples, (c: Counter<L>, labels, total) => c.inc(labels, total)),
    });
  }

  /** A gauge whose values are read when scraped: a series per sample, at its value. */
  sampledGauge<L extends string = string>({ samples, ...config }: SampledConfiguration<L>): Gauge<L> {
    return this.gauge<L>({
      ...config,
      collect: collectSamples(samples, (g: Gauge<L>, labels, value) => g.set(labels, value)),
    });
  }

  /** The exposition text for /metrics. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** One series of a sampled metric: its labels and its value now. */
export type Sample<L extends string> = readonly [labels: Partial<Record<L, string | number>>, value: number];

export interface SampledConfiguration<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  samples(): Iterable<Sample<L>> | Promise<Iterable<Sample<L>>>;
}

/** A `collect` that drops the series of the last scrape and puts each sample on its own. */
function collectSamples<M extends Counter<L> | Gauge<L>, L extends string>(
  samples: SampledConfiguration<L>['samples'],
  put: (metric: M, ...sample: Sample<L>) => void,
) {
  return async function collect(this: M) {
    const now = await samples();
    this.reset();
    for (const sample of now) put(this, ...sample);
  };
}

function prefixed(name: string): string {
  return name.startsWith(PREFIX) ? name : PREFIX + name;
}
