import { createServer, type Server } from 'node:net';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  type ConfigProblem,
  fileSetting,
  oldNodeProblem,
  portInUseProblem,
  runService,
} from '../src/index.js';

/** Runs a service whose start only records that it ran; returns its exit codes and log lines. */
async function runChecked(
  env: NodeJS.ProcessEnv,
  extra: {
    checkConfig?: () => ConfigProblem[];
    startThrows?: Error;
  } = {},
) {
  const lines: Array<Record<string, unknown>> = [];
  const exits: number[] = [];
  let started = false;
  const handle = await runService(
    {
      name: 'demo',
      configSchema: Type.Object({ CA_FILE: fileSetting('the path of a CA certificate (empty: none)') }),
      checkConfig: extra.checkConfig,
      async start() {
        started = true;
        if (extra.startThrows) throw extra.startThrows;
        return { stop: async () => {} };
      },
    },
    {
      env: { HEALTH_PORT: '0', HEALTH_HOST: '127.0.0.1', ...env },
      exit: (code) => void exits.push(code),
      handleProcessEvents: false,
      logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) },
    },
  );
  if (exits.length === 0) await handle.shutdown('test over');
  return { exits, lines, started };
}

let taken: Server;
let takenPort: number;

beforeAll(async () => {
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  takenPort = (taken.address() as { port: number }).port;
});

afterAll(() => {
  taken?.close();
});

describe('configuration checked before a service starts', () => {
  it('refuses a file setting naming no file: one line, exit 2, nothing started', async () => {
    const { exits, lines, started } = await runChecked({ CA_FILE: '/nonexistent/ca.pem' });
    expect(started).toBe(false);
    expect(exits).toEqual([2]);
    expect(lines.map((l) => l.msg)).toEqual([
      'invalid configuration: CA_FILE="/nonexistent/ca.pem": no such file; expected the path of a readable file (empty: none)',
    ]);
  });

  it("turns checkConfig's problems into the same one line and exit 2", async () => {
    const { exits, lines, started } = await runChecked(
      {},
      { checkConfig: () => [{ variable: 'LINKS', got: 'a,b', why: "links are separated by ';'", expected: 'a;b' }] },
    );
    expect(started).toBe(false);
    expect(exits).toEqual([2]);
    expect(lines.map((l) => l.msg)).toEqual([
      `invalid configuration: LINKS="a,b": links are separated by ';'; expected a;b`,
    ]);
  });

  it('names HEALTH_PORT when another process holds it, with exit 2', async () => {
    const { exits, lines } = await runChecked({ HEALTH_PORT: String(takenPort) });
    expect(exits).toEqual([2]);
    expect(lines).toHaveLength(1);
    expect(lines[0].msg).toBe(
      `invalid configuration: HEALTH_PORT="${takenPort}": port ${takenPort} on 127.0.0.1 is already in use by another process; expected a free port (or 0 for any free port)`,
    );
  });

  it('finds a port in use by trying it, and lets port 0 and a free port pass', async () => {
    expect((await portInUseProblem('API_PORT', takenPort, '127.0.0.1'))?.why).toMatch(/already in use/);
    expect(await portInUseProblem('API_PORT', 0, '127.0.0.1')).toBeUndefined();
  });

  it('takes a ConfigError thrown while starting as a setting to fix: exit 2', async () => {
    const error = new ConfigError([{ variable: 'API_PORT', got: '80', why: 'taken', expected: 'a free port' }]);
    const { exits, lines, started } = await runChecked({}, { startThrows: error });
    expect(started).toBe(true);
    expect(exits).toEqual([2]);
    expect(lines.filter((l) => l.level === 'fatal').map((l) => l.msg)).toEqual([error.message]);
  });

  it('only checks with TRACEHUB_CHECK_CONFIG_ONLY=1: exit 0, nothing started', async () => {
    const { exits, started } = await runChecked({ TRACEHUB_CHECK_CONFIG_ONLY: '1' });
    expect(started).toBe(false);
    expect(exits).toEqual([0]);
  });

  it('says which Node is too old', () => {
    expect(oldNodeProblem('20.19.2')).toBe('tracehub needs Node 22 or newer (this is 20.x)');
    expect(oldNodeProblem('22.0.0')).toBeUndefined();
    expect(oldNodeProblem('24.21.0')).toBeUndefined();
  });
});
