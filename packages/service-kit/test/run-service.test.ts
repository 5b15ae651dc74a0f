import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { type RunningService, runService, type ServiceContext } from '../src/index.js';

/** Collects the JSON log lines a service writes. */
function logSink() {
  const lines: Array<Record<string, unknown>> = [];
  return { lines, destination: { write: (line: string) => void lines.push(JSON.parse(line)) } };
}

const schema = Type.Object({ GREETING: Type.String({ minLength: 1, description: 'a greeting' }) });
const env = { GREETING: 'hi', HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1', SHUTDOWN_TIMEOUT_MS: '300' };

async function readyz(port: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
}

function run(
  start: (ctx: ServiceContext<{ GREETING: string }>) => Promise<RunningService>,
  environment: NodeJS.ProcessEnv = env,
) {
  const sink = logSink();
  const exits: number[] = [];
  const handle = runService(
    { name: 'demo', configSchema: schema, start },
    {
      env: environment,
      exit: (code) => void exits.push(code),
      handleProcessEvents: false,
      logDestination: sink.destination,
    },
  );
  return { handle, exits, lines: sink.lines };
}

describe('runService', () => {
  it('starts, reports ready, drains on shutdown and exits 0', async () => {
    const events: string[] = [];
    const { handle, exits, lines } = run(async (ctx) => {
      events.push(`start ${ctx.config.GREETING} ${ctx.config.SHUTDOWN_TIMEOUT_MS}`);
      return {
        stop: async () => {
          events.push(`stop aborted=${ctx.signal.aborted}`);
          // Work that ends later (in-flight work handed back): stop waits for it.
          await new Promise((r) => setImmediate(r));
          events.push('drained');
        },
      };
    });
    const service = await handle;
    expect(await readyz(service.healthPort)).toBe(200);
    expect(await service.shutdown('SIGTERM')).toBe(0);
    expect(events).toEqual(['start hi 300', 'stop aborted=true', 'drained']);
    expect(exits).toEqual([0]);
    expect(lines[0]).toMatchObject({ level: 'info', healthPort: service.healthPort });
    expect(lines[0].msg).toMatch(/^ready; health on port \d+/);
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'stopped', service: 'demo' });
  });

  it('stops waiting for stop() at the deadline and exits 1', async () => {
    const { handle, exits, lines } = run(async () => ({ stop: () => new Promise<void>(() => {}) }));
    const service = await handle;
    // stop() never ends: only the deadline (SHUTDOWN_TIMEOUT_MS) can end the shutdown.
    expect(await service.shutdown('SIGINT')).toBe(1);
    expect(lines.some((l) => /did not finish within 300 ms/.test(String(l.msg)))).toBe(true);
    expect(exits).toEqual([1]);
  });

  it('turns a failing start into one log line and exit 1', async () => {
    const refused = new AggregateError(
      [new Error('connect ECONNREFUSED ::1:1'), new Error('connect ECONNREFUSED 127.0.0.1:1')],
      '',
    );
    const { handle, exits, lines } = run(async () => {
      throw new Error('cannot reach Postgres at postgres://127.0.0.1:1/x', { cause: refused });
    });
    const service = await handle;
    expect(await service.exited).toBe(1);
    expect(exits).toEqual([1]);
    expect(lines).toHaveLength(1);
    expect(lines[0].level).toBe('fatal');
    expect(lines[0].msg).toBe(
      'cannot start: cannot reach Postgres at postgres://127.0.0.1:1/x: connect ECONNREFUSED ::1:1, connect ECONNREFUSED 127.0.0.1:1',
    );
  });

  it('closes what start opened, last first: after stop(), and at once when start fails', async () => {
    const closed: string[] = [];
    const ok = run(async (ctx) => {
      ctx.onClose(() => void closed.push('db'));
      ctx.onClose(async () => void closed.push('bus'));
      return { stop: async () => void closed.push('work') };
    });
    const handle = await ok.handle;
    expect(await handle.shutdown('test')).toBe(0);
    expect(closed).toEqual(['work', 'bus', 'db']);

    closed.length = 0;
    const failing = run(async (ctx) => {
      ctx.onClose(() => void closed.push('db'));
      ctx.onClose(() => {
        closed.push('bus');
        throw new Error('already gone');
      });
      throw new Error('migrations failed');
    });
    const failed = await failing.handle;
    expect(await failed.exited).toBe(1);
    expect(closed).toEqual(['bus', 'db']);
    expect(failing.lines.filter((l) => l.level === 'fatal')).toHaveLength(1);
  });

  it('turns a bad configuration into one log line and exit 2, before starting anything', async () => {
    let started = false;
    const { handle, exits, lines } = run(
      async () => {
        started = true;
        return { stop: async () => {} };
      },
      { HEALTH_PORT: 'ninety' },
    );
    await handle;
    expect(started).toBe(false);
    expect(exits).toEqual([2]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'fatal',
      msg:
        'invalid configuration: HEALTH_PORT="ninety" is not a TCP port from 0 to 65535 (0: any free port); ' +
        'GREETING is not set (expected a greeting)',
    });
  });

  it('stops with exit 1 when the service reports an unrecoverable error', async () => {
    let fail: (e: unknown) => void = () => {};
    const { handle, lines } = run(async (ctx) => {
      fail = ctx.fail;
      return { stop: async () => {} };
    });
    const service = await handle;
    fail(new Error('lost the NATS connection for good'));
    expect(await service.exited).toBe(1);
    expect(lines.filter((l) => l.level === 'fatal').map((l) => l.msg)).toEqual(['lost the NATS connection for good']);
  });

  it('logs the error itself beside its one-line message, so the stack and the causes are kept', async () => {
    const { handle, lines } = run(async () => {
      throw new Error('migrations failed', { cause: new Error('relation "x" already exists') });
    });
    const service = await handle;
    expect(await service.exited).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toBe('cannot start: migrations failed: relation "x" already exists');
    expect(lines[0].err).toMatchObject({
      type: 'Error',
      message: expect.stringContaining('migrations failed'),
      stack: expect.stringMatching(/run-service\.test\.ts/),
    });
  });
});
