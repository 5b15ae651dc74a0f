import { afterEach, describe, expect, it } from 'vitest';
import { HealthServer, ServiceMetrics } from '../src/index.js';

let server: HealthServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function get(path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${server!.port}${path}`);
  return { status: response.status, body: await response.text() };
}

describe('health server', () => {
  it('is alive at once, ready only when told and while its checks pass', async () => {
    server = new HealthServer({ port: 0, host: '127.0.0.1', metrics: new ServiceMetrics('t'), checkTimeoutMs: 200 });
    expect(await server.listen()).toBeGreaterThan(0);
    expect((await get('/healthz')).status).toBe(200);
    expect(await get('/readyz')).toEqual({ status: 503, body: '{"status":"starting"}' });

    server.setReady(true);
    expect((await get('/readyz')).status).toBe(200);

    let natsUp = false;
    server.addReadinessCheck('nats', () => natsUp);
    server.addReadinessCheck('postgres', async () => {
      throw new Error('down');
    });
    server.addReadinessCheck('slow', () => new Promise(() => {}));
    expect(await get('/readyz')).toEqual({
      status: 503,
      body: '{"status":"not ready","failing":["nats","postgres","slow"]}',
    });
    natsUp = true;
    server.addReadinessCheck('postgres', () => true);
    server.addReadinessCheck('slow', async () => undefined);
    expect((await get('/readyz')).status).toBe(200);

    server.setReady(false);
    expect(await get('/readyz')).toEqual({ status: 503, body: '{"status":"stopping"}' });
  });

  it('names what a starting service waits for, and what a ready one does without', async () => {
    server = new HealthServer({ port: 0, host: '127.0.0.1', metrics: new ServiceMetrics('t'), checkTimeoutMs: 200 });
    await server.listen();
    let postgresUp = false;
    server.addReadinessCheck('postgres', () => postgresUp, { required: false });
    expect(await get('/readyz')).toEqual({ status: 503, body: '{"status":"starting","failing":["postgres"]}' });
    server.setReady(true);
    // Not required: ready without it, and saying so.
    expect(await get('/readyz')).toEqual({ status: 200, body: '{"status":"ready","degraded":["postgres"]}' });
    server.addReadinessCheck('nats', () => false);
    expect(await get('/readyz')).toEqual({ status: 503, body: '{"status":"not ready","failing":["nats"]}' });
    server.addReadinessCheck('nats', () => true);
    postgresUp = true;
    expect(await get('/readyz')).toEqual({ status: 200, body: '{"status":"ready"}' });
  });

  it('serves Prometheus metrics with the tracehub_ prefix and the service label', async () => {
    const metrics = new ServiceMetrics('storage');
    metrics.counter({ name: 'records_written_total', help: 'records written' }).inc(3);
    metrics.gauge({ name: 'tracehub_lag', help: 'lag', labelNames: ['link'] }).set({ link: 'uart0' }, 7);
    metrics.histogram({ name: 'batch_seconds', help: 'batch time', buckets: [0.1, 1] }).observe(0.5);
    server = new HealthServer({ port: 0, host: '127.0.0.1', metrics });
    await server.listen();
    const { status, body } = await get('/metrics');
    expect(status).toBe(200);
    expect(body).toContain('tracehub_records_written_total{service="storage"} 3');
    expect(body).toContain('tracehub_lag{link="uart0",service="storage"} 7');
    expect(body).toContain('tracehub_batch_seconds_bucket{le="1",service="storage"} 1');
    expect(body).toContain('process_cpu_user_seconds_total{service="storage"}');
  });
});
