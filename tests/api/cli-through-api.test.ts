import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildApp } from '@tracehub/api';
import { getLinkByName, upsertLink } from '@tracehub/db';
import { repoRoot, T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';
import { CONTROL_TOKEN, READ_TOKEN, testApiSettings } from './fixture-data.js';

// `tracehub records`, `export`, `dict export` and `link set` from a laptop: only the API's address and a read token,
// no Postgres. What they print is what the direct-Postgres path prints, byte for byte.
const run = promisify(execFile);
const CLI = join(repoRoot, 'apps/cli/dist/main.js');

let backends: TestBackends;
let close: () => Promise<void>;
let api: string;

beforeAll(async () => {
  backends = await testBackends('cliapi');
  await storeQsFixture(backends.db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-cli', startNs: T0 });
  const app = await buildApp({ db: backends.db, bus: backends.bus, settings: testApiSettings() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  api = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  close = async () => {
    await app.close();
    await backends.close();
  };
});

afterAll(async () => {
  await close?.();
});

/** `tracehub args` with only `env` (no DATABASE_URL unless given): its stdout's bytes. */
async function tracehub(args: string[], env: Record<string, string>): Promise<Buffer> {
  const { stdout } = await run(process.execPath, [CLI, ...args], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, ...env },
    encoding: 'buffer',
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

describe('the CLI through the API', () => {
  it('records and export print what the direct-Postgres path prints', async () => {
    const direct = { DATABASE_URL: backends.fresh.url };
    const throughApi = { TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN };
    for (const args of [
      ['records', '--session', 's-cli'],
      ['records', '--session', 's-cli', '--format', 'json'],
      ['export', '--session', 's-cli', '--format', 'qspy'],
      ['export', '--session', 's-cli', '--format', 'ndjson'],
      ['dict', 'export', '--session', 's-cli'],
    ]) {
      const fromPostgres = await tracehub(args, direct);
      expect(fromPostgres.length, args.join(' ')).toBeGreaterThan(100);
      expect((await tracehub(args, throughApi)).equals(fromPostgres), args.join(' ')).toBe(true);
      expect((await tracehub([...args, '--api', api, '--token', READ_TOKEN], {})).equals(fromPostgres)).toBe(true);
    }
  });

  it('link set changes the settings as the direct-Postgres path does; a read token is refused', async () => {
    await upsertLink(backends.db, { rig: 'rig1', name: 'uart1', protocol: 'qs' });
    const change = ['objPtrSize=8', 'sigSize=2', 'version=7.4'];
    const throughApi = (
      await tracehub(['link', 'set', '--rig', 'rig1', '--link', 'uart0', ...change], {
        TRACEHUB_API: api,
        TRACEHUB_TOKEN: CONTROL_TOKEN,
      })
    ).toString();
    const direct = (
      await tracehub(['link', 'set', '--rig', 'rig1', '--link', 'uart1', ...change], {
        DATABASE_URL: backends.fresh.url,
      })
    ).toString();
    expect(throughApi).toBe(direct.replace('rig1/uart1', 'rig1/uart0'));
    expect(throughApi).toBe('rig1/uart0: {"objPtrSize":8,"sigSize":2,"version":740} (applies from the next session)\n');
    const stored = async (name: string) => (await getLinkByName(backends.db, 'rig1', name))?.settings;
    expect(await stored('uart0')).toEqual(await stored('uart1'));
    // A read token may not change settings: the API says so, and what to do.
    const refused = await tracehub(['link', 'set', '--rig', 'rig1', '--link', 'uart0', 'sigSize=4'], {
      TRACEHUB_API: api,
      TRACEHUB_TOKEN: READ_TOKEN,
    }).catch((e: { stderr: Buffer }) => e.stderr.toString());
    expect(refused).toMatch(/the API answered 403 .*ask for one with more scopes/);
  });

  it('says what to do without a token', async () => {
    const failed = await tracehub(['records', '--session', 's-cli', '--api', api], {}).catch((e: { stderr: Buffer }) =>
      e.stderr.toString(),
    );
    expect(failed).toMatch(/the API answered 401 .*give a token with --token \(or TRACEHUB_TOKEN\)/);
  });
});
