import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getSession, isSessionLinkComplete, upsertLink } from '@tracehub/db';
import { fixturesDir, qspyLines, repoRoot } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import {
  backendsEnv,
  cli,
  cliBytes,
  decoded,
  decodedApartFromHostTime,
  offlineDecode,
  printedLines,
  startService,
  stopAll,
  storedSession,
} from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';
import { replayCapture, stpSettings } from './stp-vector-links.js';

let pipeline: PipelineWithApi;
let work: string;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('linkbytes', {
    services: ['decoder-qs', 'decoder-stp', ['storage', { STORAGE_LINK_BATCH_MS: '100' }]],
  });
  work = mkdtempSync(join(tmpdir(), 'th-link-bytes-'));
}, 120_000);

afterAll(async () => {
  await pipeline?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Waits until every raw chunk of the session is stored. */
async function linkStored(session: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await isSessionLinkComplete(pipeline.db, session)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`link bytes of session ${session} not completely stored after 30 s`);
}

/** The raw export of a session through `tracehub export` (to a file). */
async function cliRawExport(session: string): Promise<Buffer> {
  const out = join(work, `${session}.bin`);
  await cli(['export', '--session', session, '--format', 'raw', '-o', out], backendsEnv(pipeline.env));
  return readFileSync(out);
}

/** The raw export of a session through the API. */
async function apiRawExport(session: string): Promise<{ api: Buffer; source: unknown }> {
  const res = await pipeline.app.inject({
    method: 'GET',
    url: `/api/v1/sessions/${session}/export?format=raw`,
    headers: { authorization: `Bearer ${READ_TOKEN}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return { api: res.rawPayload, source: res.headers['x-tracehub-raw-source'] };
}

/** A capture through a gateway file link (as `tracehub replay` runs it, in this process); resolves with the session. */
function replay(rig: string, link: string, protocol: 'qs' | 'stp', file: string, readBytes?: number): Promise<string> {
  return replayCapture(pipeline.bus, { protocol, rig, link }, file, readBytes);
}

/** Runs `work` over `items`, `width` at a time. */
async function inParallel<T>(items: T[], width: number, work: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        await work(items[i], i);
      }
    }),
  );
}

describe('the link bytes, kept', () => {
  it('every QS fixture replayed through a gateway link: raw export byte-identical, records as tracehub decode prints them', async () => {
    const files = readdirSync(join(fixturesDir, 'qs')).filter((f) => f.endsWith('.qs'));
    expect(files.length).toBeGreaterThanOrEqual(11);
    const againstQspy: string[] = [];
    await inParallel(files, 3, async (name, i) => {
      const file = join(fixturesDir, 'qs', name);
      const session = await replay('rigL', `qs${i}`, 'qs', file);
      const stored = await storedSession(pipeline.db, session);
      const expected = await offlineDecode(file, 'qs');
      expect(stored.map(decoded), name).toEqual(expected.map(decoded));
      // And the reference tool's output: what qspy printed for the capture (a capture that
      // qspy read with size options of its own is compared in link-settings.test.ts).
      const reference = join(fixturesDir, 'qs', name.replace(/\.qs$/, '.qspy.txt'));
      if (existsSync(reference) && !existsSync(reference.replace(/\.qspy\.txt$/, '.qspy-args'))) {
        expect(printedLines(stored), `${name}: qspy's output`).toEqual(qspyLines(name.replace(/\.qs$/, '')));
        againstQspy.push(name);
      }
      await linkStored(session);
      const { api, source } = await apiRawExport(session);
      const bytes = readFileSync(file);
      expect(source, name).toBe('link');
      expect(api.equals(bytes), `${name}: GET /sessions/{id}/export?format=raw`).toBe(true);
      if (i === 0)
        expect((await cliRawExport(session)).equals(bytes), `${name}: tracehub export --format raw`).toBe(true);
      const row = await getSession(pipeline.db, session);
      expect(Number(row?.link_bytes), name).toBe(bytes.length);
      expect(Number(row?.link_lost_bytes), name).toBe(0);
    });
    // Every capture qspy read without options of its own.
    expect(againstQspy.length).toBeGreaterThanOrEqual(9);
  }, 240_000);

  it('QS strings with target bytes >= 0x80: the qspy export, tracehub export and tracehub records write the bytes decode writes', async () => {
    // A capture of random strings, checked against the real qspy's output in packages/qs.
    const file = join(repoRoot, 'packages/qs/test/fixtures/random_latin1.qs');
    const session = await replay('rigL', 'latin1', 'qs', file);
    await storedSession(pipeline.db, session);
    const decodedBytes = await cliBytes(['decode', '--protocol', 'qs', file]);
    expect(decodedBytes.some((b) => b >= 0x80)).toBe(true);
    const res = await pipeline.app.inject({
      method: 'GET',
      url: `/api/v1/sessions/${session}/export?format=qspy`,
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.rawPayload.equals(decodedBytes), 'GET /sessions/{id}/export?format=qspy').toBe(true);
    const out = join(work, `${session}.txt`);
    await cli(['export', '--session', session, '--format', 'qspy', '-o', out], backendsEnv(pipeline.env));
    expect(readFileSync(out).equals(decodedBytes), 'tracehub export --format qspy').toBe(true);
    const printed = await cliBytes(
      ['records', '--rig', 'rigL', '--link', 'latin1', '--session', session],
      backendsEnv(pipeline.env),
    );
    expect(printed.equals(decodedBytes), 'tracehub records').toBe(true);
  }, 120_000);

  it('every STP vector replayed through a gateway link with its config: raw export byte-identical', async () => {
    const vectors = readdirSync(join(fixturesDir, 'stp'))
      .filter((f) => f.endsWith('.stp'))
      .map((f) => f.slice(0, -'.stp'.length));
    expect(vectors.length).toBeGreaterThanOrEqual(27);
    await inParallel(vectors, 3, async (name, i) => {
      const file = join(fixturesDir, 'stp', `${name}.stp`);
      const vectorFile = join(fixturesDir, 'stp', `${name}.expected.json`);
      const config = JSON.parse(readFileSync(vectorFile, 'utf8')).config as Record<string, unknown>;
      const link = `stp${i}`;
      await upsertLink(pipeline.db, { rig: 'rigL', name: link, protocol: 'stp', settings: stpSettings(config) });
      const session = await replay('rigL', link, 'stp', file);
      await linkStored(session);
      const { api, source } = await apiRawExport(session);
      const bytes = readFileSync(file);
      expect(source, name).toBe('link');
      expect(api.equals(bytes), `${name}: GET /sessions/{id}/export?format=raw`).toBe(true);
      if (name === 'v1_long_message')
        expect((await cliRawExport(session)).equals(bytes), `${name}: tracehub export --format raw`).toBe(true);
      // A replayed file has no pauses but its settings': its records are decode's, except for
      // the vectors whose config places pauses in the stream (a file cannot carry them).
      if (((config.pauses as unknown[] | undefined) ?? []).length === 0) {
        const stored = await storedSession(pipeline.db, session);
        const expected = await offlineDecode(file, 'stp', ['--stp-config', vectorFile]);
        expect(expected.length, name).toBeGreaterThan(0);
        // (An STP record's raw bytes and timestamp hold the host time it was received at.)
        expect(stored.map(decodedApartFromHostTime), name).toEqual(expected.map(decodedApartFromHostTime));
      }
    });
  }, 300_000);

  it('decodes an STP v1 stream replayed as fast as it goes exactly as decode does, run after run', async () => {
    const name = 'v1_long_message';
    const file = join(fixturesDir, 'stp', `${name}.stp`);
    const vectorFile = join(fixturesDir, 'stp', `${name}.expected.json`);
    const config = JSON.parse(readFileSync(vectorFile, 'utf8')).config as Record<string, unknown>;
    await upsertLink(pipeline.db, { rig: 'rigL', name: 'v1runs', protocol: 'stp', settings: stpSettings(config) });
    const expected = (await offlineDecode(file, 'stp', ['--stp-config', vectorFile])).map(decodedApartFromHostTime);
    expect(expected.length).toBeGreaterThan(0);
    // Small reads, so that each run cuts the stream into many chunks, received whenever the
    // machine gets to them.
    for (let run = 0; run < 20; run++) {
      const session = await replay('rigL', 'v1runs', 'stp', file, 1024);
      const stored = await storedSession(pipeline.db, session);
      expect(stored.map(decodedApartFromHostTime), `run ${run + 1}`).toEqual(expected);
    }
  }, 300_000);

  it('a session replayed twice into the same link keeps each session apart, and a re-run of storage stores nothing twice', async () => {
    const file = join(fixturesDir, 'qs', 'dpp_qv.qs');
    const big = join(work, 'dpp_qv.x20');
    writeFileSync(big, Buffer.concat(Array.from({ length: 20 }, () => readFileSync(file))));
    const first = await replay('rigL', 'twice', 'qs', big);
    const second = await replay('rigL', 'twice', 'qs', big);
    expect(first).not.toBe(second);
    for (const session of [first, second]) {
      await linkStored(session);
      expect((await apiRawExport(session)).api.equals(readFileSync(big))).toBe(true);
    }
    // A second storage on the same consumer, restarted: nothing is written again.
    const before = await pipeline.db
      .selectFrom('link_chunks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const again = await startService('storage', pipeline.env);
    await stopAll([again]);
    const after = await pipeline.db
      .selectFrom('link_chunks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  }, 120_000);
});
