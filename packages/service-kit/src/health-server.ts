import Fastify, { type FastifyInstance } from 'fastify';
import type { ServiceMetrics } from './metrics.js';

/** A readiness check: resolves true (or void) when fine; false or a throw means not ready. */
export type ReadinessCheck = () => boolean | undefined | Promise<boolean | undefined>;

export interface HealthServerOptions {
  port: number;
  host?: string;
  metrics: ServiceMetrics;
  /** How long one readiness check may take before it counts as failed (default 1000 ms). */
  checkTimeoutMs?: number;
}

type ReadyState = 'starting' | 'ready' | 'stopping';

/**
 * `/healthz` (the process is alive), `/readyz` (503 until the service is ready, while it
 * stops, and while any readiness check fails) and `/metrics` (Prometheus).
 */
export class HealthServer {
  private state: ReadyState = 'starting';
  private readonly checks = new Map<string, ReadinessCheck>();
  private readonly app: FastifyInstance;
  private boundPort = 0;

  constructor(private readonly opts: HealthServerOptions) {
    this.app = Fastify({ logger: false });
    this.app.get('/healthz', async () => ({ status: 'alive' }));
    this.app.get('/readyz', async (_request, reply) => {
      if (this.state !== 'ready') return reply.code(503).send({ status: this.state });
      const failing = await this.failingChecks();
      if (failing.length > 0) return reply.code(503).send({ status: 'not ready', failing });
      return { status: 'ready' };
    });
    this.app.get('/metrics', async (_request, reply) => {
      reply.header('content-type', opts.metrics.contentType);
      return opts.metrics.render();
    });
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
    this.state = ready ? 'ready' : 'stopping';
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  addReadinessCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  /** The Fastify instance, for tests (`inject`). */
  get fastify(): FastifyInstance {
    return this.app;
  }

  close(): Promise<void> {
    return this.app.close();
  }

  private async failingChecks(): Promise<string[]> {
    const timeoutMs = this.opts.checkTimeoutMs ?? 1000;
    const results = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), timeoutMs);
        });
        try {
          const ok = await Promise.race([Promise.resolve().then(check), timeout]);
          return ok === false ? name : undefined;
        } catch {
          return name;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return results.filter((name): name is string => name !== undefined);
  }
}
