import Fastify, { type FastifyInstance } from 'fastify';
import { healthRoutes, metricsRoute } from './health-routes.js';
import type { ServiceMetrics } from './metrics.js';
import { Readiness, type ReadinessCheck, type ReadinessCheckOptions } from './readiness.js';

export interface HealthServerOptions {
  port: number;
  host?: string;
  metrics: ServiceMetrics;
  /** How long one readiness check may take before it counts as failed (default 1000 ms). */
  checkTimeoutMs?: number;
}

/** The health port of a service: `/healthz`, `/readyz` and `/metrics` (see `healthRoutes`). */
export class HealthServer {
  readonly readiness: Readiness;
  private readonly app: FastifyInstance;
  private boundPort = 0;

  constructor(private readonly opts: HealthServerOptions) {
    this.readiness = new Readiness(opts.checkTimeoutMs);
    this.app = Fastify({ logger: false });
    this.app.register(healthRoutes, { readiness: this.readiness });
    this.app.register(metricsRoute, { metrics: opts.metrics });
  }

  /** Starts listening; returns the bound port (useful with port 0). */
  async listen(): Promise<number> {
    await this.app.listen({ port: this.opts.port, host: this.opts.host ?? '0.0.0.0' });
    const address = this.app.server.address();
    this.boundPort = typeof address === 'object' && address ? address.port : this.opts.port;
    return this.boundPort;
  }

  get port(): number {
    return this.boundPort;
  }

  setReady(ready: boolean): void {
    this.readiness.setReady(ready);
  }

  get ready(): boolean {
    return this.readiness.ready;
  }

  addReadinessCheck(name: string, check: ReadinessCheck, options?: ReadinessCheckOptions): void {
    this.readiness.addCheck(name, check, options);
  }

  /** The Fastify instance, for tests (`inject`). */
  get fastify(): FastifyInstance {
    return this.app;
  }

  close(): Promise<void> {
    return this.app.close();
  }
}
