import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { buildApp } from '@tracehub/api';
import { getLinkByName, insertLinkChunks, type LinkChunk, upsertLink } from '@tracehub/db';
import { fixturePath, repoRoot, T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { storeSessionStart } from '../support/stored-session.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';
import { CONTROL_TOKEN, READ_TOKEN, testApiSettings } from './fixture-data.js';

// Every `tracehub` command on stored data or settings from a laptop: only the API's address and a read or control
// token, no Postgres. What they print is what the direct-Postgres path prints, byte for byte.
const run = promisify(execFile);
const CLI = join(repoRoot, 'apps/cli/dist/main.js');

let backends: TestBackends;
let close: () => Promise<void>;
let api: string;

beforeAll(async () => {
  backends = await testBackends('cliapi');
  await storeQsFixture(backends.db, 'dpp_qv', { rig: 'rig1', link: 'uart0', session: 's-cli', startNs: T0 });
  // A session with its link bytes, as storage keeps them, for redecode: the capture in the 256-byte chunks
  // storeQsFixture decoded, then the empty chunk that closes the session.
  const capture = new Uint8Array(readFileSync(fixturePath('qs', 'dpp_qv.qs')));
  await storeQsFixture(backends.db, 'dpp_qv', { rig: 'rig2', link: 'uart0', session: 's-redecode', startNs: T0 });
  const chunks: LinkChunk[] = [];
  for (let off = 0; off < capture.length; off += 256) {
    const chunk = chunks.length;
    chunks.push({
      chunk,
      recvNs: T0 + BigInt(chunk) * 1_000_000n,
      lost: 0,
      eos: false,
      data: capture.subarray(off, off + 256),
    });
  }
  chunks.push({
    chunk: chunks.length,
    recvNs: T0 + BigInt(chunks.length) * 1_000_000n,
    lost: 0,
    eos: true,
    data: new Uint8Array(),
  });
  await insertLinkChunks(backends.db, [{ session: 's-redecode', chunks }]);
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
      ['records', '--rig', 'rig1', '--link', 'uart0'],
      ['records', '--rig', 'rig1', '--link', 'uart0', '--session', 's-cli', '--format', 'json'],
      ['export', '--session', 's-redecode', '--format', 'raw'],
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

    // link show: the settings and their changes, newest first, as Postgres has them.
    for (const show of [
      ['link', 'show', '--rig', 'rig1', '--link', 'uart0'],
      ['link', 'show', '--rig', 'rig1', '--link', 'uart0', '--format', 'json'],
    ]) {
      const fromPostgres = (await tracehub(show, { DATABASE_URL: backends.fresh.url })).toString();
      expect(fromPostgres).toMatch(/changes, newest first:|"history":\[\{/);
      expect((await tracehub(show, { TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN })).toString()).toBe(fromPostgres);
    }

    // Creating a link: the API creates none, and says what to do instead.
    const create = await tracehub(
      ['link', 'set', '--rig', 'rig9', '--link', 'new0', '--protocol', 'stp', 'version=1'],
      {
        TRACEHUB_API: api,
        TRACEHUB_TOKEN: CONTROL_TOKEN,
      },
    ).catch((e: { stderr: Buffer }) => e.stderr.toString());
    expect(create).toMatch(/the API creates no links: start the link's gateway .* --database-url/);
  });

  it("records --rig --link alone is the link's latest session; a session of another link is refused", async () => {
    const throughApi = { TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN };
    const refused = async (args: string[], env: Record<string, string>) =>
      tracehub(args, env).catch((e: { stderr: Buffer }) => e.stderr.toString());
    for (const args of [
      ['records', '--rig', 'rig1', '--link', 'uart9'],
      ['records', '--rig', 'rig2', '--link', 'uart0', '--session', 's-cli'],
      ['records', '--session', 'no-such-session'],
    ]) {
      const fromPostgres = await refused(args, { DATABASE_URL: backends.fresh.url });
      expect(fromPostgres).toMatch(
        /no stored session|belongs to rig1\/uart0, not rig2\/uart0|no session 'no-such-session'/,
      );
      expect(await refused(args, throughApi)).toBe(fromPostgres);
    }
  });

  it('records of a session not completely stored warns the same way', async () => {
    await storeSessionStart(backends.db, { rig: 'rig4', link: 'uart0', session: 's-open', startNs: T0 }, 'qs');
    const stderrOf = async (env: Record<string, string>) =>
      (
        await run(process.execPath, [CLI, 'records', '--rig', 'rig4', '--link', 'uart0', '--wait', '0.3'], {
          cwd: repoRoot,
          env: { PATH: process.env.PATH, ...env },
        })
      ).stderr;
    const fromPostgres = await stderrOf({ DATABASE_URL: backends.fresh.url });
    expect(fromPostgres).toBe('warning: session s-open is not completely stored yet (0 records so far, still open)\n');
    expect(await stderrOf({ TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN })).toBe(fromPostgres);
  });

  it('dict import gives the link the file as the direct-Postgres path does', async () => {
    await upsertLink(backends.db, { rig: 'rig3', name: 'uart0', protocol: 'qs' });
    await upsertLink(backends.db, { rig: 'rig3', name: 'uart1', protocol: 'qs' });
    const dic = join(repoRoot, 'apps/cli/test/fixtures/qspy-dic/dpp_qv.dic');
    const importInto = (link: string, env: Record<string, string>) =>
      tracehub(['dict', 'import', '--rig', 'rig3', '--link', link, dic], env).then(String);
    const throughApi = await importInto('uart0', { TRACEHUB_API: api, TRACEHUB_TOKEN: CONTROL_TOKEN });
    const direct = await importInto('uart1', { DATABASE_URL: backends.fresh.url });
    expect(throughApi).toMatch(/^rig3\/uart0: \d+ names from .*dpp_qv\.dic \(applies from the next session\)\n$/);
    expect(throughApi).toBe(direct.replace('rig3/uart1', 'rig3/uart0'));
    const stored = async (name: string) => (await getLinkByName(backends.db, 'rig3', name))?.settings;
    // Kept as the settings keep text (without the file's last line end).
    expect(String((await stored('uart0'))?.dictionaries)).toBe(readFileSync(dic, 'latin1').trimEnd());
    expect(await stored('uart0')).toEqual(await stored('uart1'));
    // A read token may not: the API says so.
    const refused = await importInto('uart0', { TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN }).catch(
      (e: { stderr: Buffer }) => e.stderr.toString(),
    );
    expect(refused).toMatch(/the API answered 403 .*ask for one with more scopes/);
  });

  it('redecode decodes the session again on the API server and prints the same summary', async () => {
    const args = ['redecode', '--session', 's-redecode'];
    const withoutTime = (line: string) => line.replace(/, \d+ ms;/, ', N ms;');
    const throughApi = (await tracehub(args, { TRACEHUB_API: api, TRACEHUB_TOKEN: CONTROL_TOKEN })).toString();
    const direct = (await tracehub(args, { DATABASE_URL: backends.fresh.url })).toString();
    expect(throughApi).toMatch(
      /^session s-redecode: \d+ records \(was \d+\), \d+ errors, \d+ gaps from \d+ link bytes in \d+ chunks/,
    );
    expect(withoutTime(throughApi)).toBe(withoutTime(direct));
    const refused = await tracehub(args, { TRACEHUB_API: api, TRACEHUB_TOKEN: READ_TOKEN }).catch(
      (e: { stderr: Buffer }) => e.stderr.toString(),
    );
    expect(refused).toMatch(/the API answered 403 .*ask for one with more scopes/);
  });

  it('says what to do without a token', async () => {
    const failed = await tracehub(['records', '--session', 's-cli', '--api', api], {}).catch((e: { stderr: Buffer }) =>
      e.stderr.toString(),
    );
    expect(failed).toMatch(/the API answered 401 .*give a token with --token \(or TRACEHUB_TOKEN\)/);
  });
});
