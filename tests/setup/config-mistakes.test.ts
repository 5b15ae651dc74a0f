import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FreshDatabase, freshDatabase, natsUrl, repoRoot, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, backendsEnv, removeBusPrefix, SERVICE_APPS, startNode, within } from '../foundation/processes.js';

// The mistakes a newcomer makes in the first ten minutes, each driven through `npm start`
// (scripts/start-all.mjs) and through the one service it concerns: every one must end in exit 2
// within 5 s, with nothing restarted, and exactly one line naming the setting to fix.
const LIMIT_MS = 5000;

let db: FreshDatabase;
const prefix = uniquePrefix('setup');
let busy: Server;
let busyPort: number;
let ca: string;

beforeAll(async () => {
  assertBuilt(['scripts/start-all.mjs', ...SERVICE_APPS.map((app) => `apps/${app}/dist/main.js`)]);
  db = await freshDatabase('setup');
  // A port some other program holds, as a second stack or a forgotten server would. Below the
  // ephemeral range, with the four after it free: npm start gives the apps health ports from
  // it on, and only the first may be taken (outgoing connections take ephemeral ports).
  busy = createServer();
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const listening = await new Promise<boolean>((resolve) => {
      busy.once('error', () => resolve(false));
      busy.listen(port, '0.0.0.0', () => resolve(true));
    });
    if (!listening) continue;
    if ((await Promise.all([1, 2, 3, 4].map((i) => isFree(port + i)))).every(Boolean)) {
      busyPort = port;
      break;
    }
    await new Promise<void>((resolve) => busy.close(() => resolve()));
  }
  // A file that exists, for the setting that goes with a missing one.
  ca = join(mkdtempSync(join(tmpdir(), 'setup-')), 'ca.pem');
  writeFileSync(ca, '');
});

afterAll(async () => {
  busy?.close();
  await db?.drop();
  await removeBusPrefix(natsUrl(), prefix);
});

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve(true)));
  });
}

const good = () => ({ ...backendsEnv({ natsUrl: natsUrl(), databaseUrl: db.url, prefix }), HEALTH_PORT: '0' });

interface Mistake {
  what: string;
  /** The service the setting belongs to, run alone. */
  app: (typeof SERVICE_APPS)[number];
  env: () => Record<string, string>;
  /** The variable the one line names. */
  variable: string;
  /** What else the line says (the value, the way out). */
  says: RegExp;
}

const MISTAKES: Mistake[] = [
  {
    what: 'a link without its link name',
    app: 'gateway',
    env: () => ({ TRACEHUB_LINKS: 'qs/rig1=tcp-listen:127.0.0.1:0' }),
    variable: 'TRACEHUB_LINKS',
    says: /write it as protocol\/rig\/link=address, e\.g\. qs\/rig7\/uart0=tcp-listen::6601/,
  },
  {
    what: 'an unknown protocol in a link',
    app: 'gateway',
    env: () => ({ TRACEHUB_LINKS: 'qspy/rig1/uart0=tcp-listen:127.0.0.1:0' }),
    variable: 'TRACEHUB_LINKS',
    says: /protocol must be qs, stp or swd, not 'qspy'/,
  },
  {
    what: 'a comma between links',
    app: 'gateway',
    env: () => ({ TRACEHUB_LINKS: 'qs/rig1/uart0=tcp-listen:127.0.0.1:0,stp/rig2/swo=tcp-listen:127.0.0.1:0' }),
    variable: 'TRACEHUB_LINKS',
    says: /links are separated by ';', not ','/,
  },
  {
    what: 'a link port in use',
    app: 'gateway',
    env: () => ({ TRACEHUB_LINKS: `qs/rig1/uart0=tcp-listen:127.0.0.1:${busyPort}` }),
    variable: 'TRACEHUB_LINKS',
    says: /link qs\/rig1\/uart0: port \d+ on 127\.0\.0\.1 is already in use/,
  },
  {
    what: 'a trace box output port in use',
    app: 'gateway',
    env: () => ({ TRACEHUB_LINKS: `stp/rig1/swo=tcp-listen:127.0.0.1:0?tracebox=127.0.0.1:${busyPort}` }),
    variable: 'TRACEHUB_LINKS',
    says: /link stp\/rig1\/swo: port \d+ on 127\.0\.0\.1 is already in use/,
  },
  {
    what: 'API_PORT in use',
    app: 'api',
    env: () => ({ API_PORT: String(busyPort) }),
    variable: 'API_PORT',
    says: /API_PORT="\d+": port \d+ on 0\.0\.0\.0 is already in use.*a free port/,
  },
  {
    what: 'no API_TOKENS',
    app: 'api',
    env: () => ({ API_TOKENS: '' }),
    variable: 'API_TOKENS',
    says: /API_AUTH=none.*e\.g\. API_TOKENS=/,
  },
  {
    what: 'a missing TLS file',
    app: 'api',
    env: () => ({ API_TLS_CERT: '/nonexistent/api.crt', API_TLS_KEY: ca }),
    variable: 'API_TLS_CERT',
    says: /API_TLS_CERT="\/nonexistent\/api\.crt": no such file/,
  },
  {
    what: 'a malformed NATS_URL',
    app: 'decoder-qs',
    env: () => ({ NATS_URL: 'localhost:4222' }),
    variable: 'NATS_URL',
    says: /NATS_URL=.?"?localhost:4222.* is not a NATS URL such as nats:\/\/127\.0\.0\.1:4222/,
  },
  {
    what: 'a malformed DATABASE_URL',
    app: 'storage',
    env: () => ({ DATABASE_URL: 'postgres//postgres@127.0.0.1/x' }),
    variable: 'DATABASE_URL',
    says: /DATABASE_URL=.*postgres\/\/postgres@127\.0\.0\.1\/x.* is not a Postgres URL such as postgres:\/\//,
  },
];

/** A line of output as a person reads it: a JSON log line's message, any other line as it is. */
function readable(line: string): string {
  try {
    return (JSON.parse(line) as { msg?: string }).msg ?? line;
  } catch {
    return line;
  }
}

/** Lines of a process's output that name `variable`. */
const naming = (lines: string[], variable: string) =>
  lines.map(readable).filter((l) => new RegExp(`\\b${variable}\\b`).test(l));

describe('a configuration mistake is one line and exit 2, never a restart', () => {
  it('in each single service', async () => {
    for (const mistake of MISTAKES) {
      const proc = startNode(`apps/${mistake.app}/dist/main.js`, { ...good(), ...mistake.env() });
      try {
        const { value, ms } = await within(proc.exited, 30_000, `${mistake.app} with ${mistake.what}`);
        expect(value, mistake.what).toBe(2);
        expect(ms, `${mistake.what}: exit within ${LIMIT_MS} ms`).toBeLessThan(LIMIT_MS);
        const lines = [...proc.stdout, ...proc.stderr];
        expect(naming(lines, mistake.variable), mistake.what).toHaveLength(1);
        expect(naming(lines, mistake.variable)[0], mistake.what).toMatch(mistake.says);
        expect(JSON.parse(proc.stdout.at(-1) ?? '{}').level, mistake.what).toBe('fatal');
      } finally {
        proc.child.kill('SIGKILL');
      }
    }
  }, 240_000);

  it('through npm start, which starts nothing', async () => {
    const npmStartMistakes = [
      ...MISTAKES.map(({ what, env, variable, says }) => ({ what, env, variable, says })),
      {
        what: 'no NATS at NATS_URL',
        env: () => ({ NATS_URL: 'nats://127.0.0.1:1' }),
        variable: 'NATS_URL',
        says: /no NATS server at 127\.0\.0\.1:1 .*start it with JetStream/,
      },
      {
        what: 'no Postgres at DATABASE_URL',
        env: () => ({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/tracehub' }),
        variable: 'DATABASE_URL',
        says: /no Postgres server at 127\.0\.0\.1:1 .*start Postgres/,
      },
      {
        what: 'health ports in use',
        env: () => ({ TRACEHUB_HEALTH_PORT_BASE: String(busyPort) }),
        variable: 'HEALTH_PORT',
        says: /already in use.*TRACEHUB_HEALTH_PORT_BASE/,
      },
    ];
    for (const mistake of npmStartMistakes) {
      const start = startNode('scripts/start-all.mjs', {
        ...good(),
        TRACEHUB_HEALTH_PORT_BASE: '0',
        ...mistake.env(),
      });
      try {
        const { value, ms } = await within(start.exited, 30_000, `npm start with ${mistake.what}`);
        expect(value, mistake.what).toBe(2);
        expect(ms, `${mistake.what}: exit within ${LIMIT_MS} ms`).toBeLessThan(LIMIT_MS);
        // Nothing ran, so nothing was restarted.
        expect(
          start.stdout.filter((l) => /running \(pid|restart/.test(l)),
          mistake.what,
        ).toEqual([]);
        const lines = [...start.stdout, ...start.stderr];
        expect(naming(lines, mistake.variable), `${mistake.what}:\n${lines.join('\n')}`).toHaveLength(1);
        expect(naming(lines, mistake.variable)[0], mistake.what).toMatch(mistake.says);
      } finally {
        start.child.kill('SIGKILL');
      }
    }
  }, 300_000);
});

describe('an older Node', () => {
  // Node 20 is still the default on many machines; TRACEHUB_TEST_OLD_NODE names one to try.
  const oldNode = process.env.TRACEHUB_TEST_OLD_NODE ?? '/usr/bin/node';

  it('is told it needs Node 22 by the CLI, every service and npm start, with exit 2', async () => {
    const version = execFileSync(oldNode, ['--version'], { encoding: 'utf8' }).trim();
    const major = Number.parseInt(version.slice(1), 10);
    expect(major, `${oldNode} must be a Node older than 22 (set TRACEHUB_TEST_OLD_NODE)`).toBeLessThan(22);
    const entries = [
      ['apps/cli/bin/tracehub.js', 'records', '--session', 'x'],
      ['apps/cli/bin/tracehub.js', 'decode', '-p', 'qs', '-'],
      ['scripts/start-all.mjs'],
      ...SERVICE_APPS.map((app) => [`apps/${app}/dist/main.js`]),
    ];
    await Promise.all(
      entries.map(async (args) => {
        const child = spawn(oldNode, args, { cwd: repoRoot, env: { ...good(), PATH: process.env.PATH } });
        let output = '';
        child.stdout.on('data', (d) => {
          output += d;
        });
        child.stderr.on('data', (d) => {
          output += d;
        });
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code, args.join(' ')).toBe(2);
        expect(output, args.join(' ')).toBe(`tracehub needs Node 22 or newer (this is ${major}.x)\n`);
      }),
    );
  });
});
