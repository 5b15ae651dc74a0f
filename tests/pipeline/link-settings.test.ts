// Link settings as data: set through the API (and the CLI, and a TRACEHUB_LINKS address),
// read by the decoders at the next session, kept with who changed them when.
import { readFileSync } from 'node:fs';
import type { TraceRecord } from '@tracehub/contracts';
import { getLinkByName } from '@tracehub/db';
import { QSPY_SIZE_OPTIONS } from '@tracehub/qs';
import { fixturePath, freePort, qspyLines } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import { connectTarget } from '../support/tcp-target.js';
import {
  backendsEnv,
  cli,
  decoded,
  decodedApartFromHostTime,
  offlineDecode,
  printedLines,
  replay,
  startService,
  stopAll,
  storedSession,
  waitForSessions,
} from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';

let pipeline: PipelineWithApi;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('linkset', {
    services: ['decoder-qs', 'decoder-stp', 'storage'],
    api: { controlTimeoutMs: 2000 },
  });
}, 120_000);

afterAll(() => pipeline?.close());

/** Replays `file` as `rig/link`; resolves with the session's records once all are stored. */
async function replayStored(rig: string, link: string, protocol: string, file: string, flags: string[] = []) {
  return storedSession(pipeline.db, await replay(pipeline.env, rig, link, protocol, file, flags));
}

async function linkId(rig: string, link: string): Promise<number> {
  const row = await getLinkByName(pipeline.db, rig, link);
  if (!row) throw new Error(`link ${rig}/${link} is not stored`);
  return row.id;
}

function putSettings(id: number, body: object, token = CONTROL_TOKEN) {
  return pipeline.app.inject({
    method: 'PUT',
    url: `/api/v1/links/${id}/settings`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
}

/** What `tracehub decode --stp-config VECTOR --format json` prints for a reference vector. */
async function decodeWithStpConfig(name: string): Promise<TraceRecord[]> {
  return offlineDecode(fixturePath('stp', `${name}.stp`), 'stp', [
    '--stp-config',
    fixturePath('stp', `${name}.expected.json`),
  ]);
}

/** What `tracehub decode --protocol qs --format json` prints with the sizes as its flags. */
async function decodeWithQsSizes(name: string, sizes: Record<string, number>): Promise<TraceRecord[]> {
  const flags = Object.entries(sizes).flatMap(([k, v]) => [
    `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`,
    String(v),
  ]);
  return offlineDecode(fixturePath('qs', `${name}.qs`), 'qs', flags);
}

/** The lines qspy prints for records (records that print nothing, as qspy, leave no line). */
/** qspy's size options (`-O8 -F8 -Q2`) as link settings. */
function settingsFromQspyArgs(text: string): Record<string, number> {
  const names: Readonly<Record<string, string>> = QSPY_SIZE_OPTIONS;

  const out: Record<string, number> = {};
  for (const m of text.matchAll(/-([OFTSEQPBC])\s*(\d)/g)) out[names[m[1]]] = Number(m[2]);
  return out;
}

describe('link settings through the API', () => {
  it('decodes an STP v1 vector with a little-endian master exactly as decode --stp-config, from the next session', async () => {
    const name = 'v1_data_sizes_endian';
    const vector = JSON.parse(readFileSync(fixturePath('stp', `${name}.expected.json`), 'utf8'));
    const expected = await decodeWithStpConfig(name);
    expect(expected.length).toBeGreaterThan(0);
    // The first session decodes with the defaults (STP v2, big-endian masters): not the vector's output.
    const before = await replayStored('rigP', 'stp1', 'stp', fixturePath('stp', `${name}.stp`));
    expect(before.map(decodedApartFromHostTime)).not.toEqual(expected.map(decodedApartFromHostTime));

    const id = await linkId('rigP', 'stp1');
    const settings = {
      version: 1,
      littleEndianMasters: vector.config.little_endian_masters,
      start: vector.config.start,
      maxPauseMs: vector.config.max_pause_ms,
      resyncPauseMs: vector.config.resync_pause_ms,
    };
    expect(settings.littleEndianMasters).toEqual([17]);
    const put = await putSettings(id, { settings, by: 'lab tester' });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({ linkId: id, settings, applies: 'next-session', session: null });

    const after = await replayStored('rigP', 'stp1', 'stp', fixturePath('stp', `${name}.stp`));
    expect(after.map(decodedApartFromHostTime)).toEqual(expected.map(decodedApartFromHostTime));

    const shown = await pipeline.app.inject({
      url: `/api/v1/links/${id}/settings`,
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(shown.statusCode).toBe(200);
    const body = shown.json();
    expect(body.settings).toEqual(settings);
    expect(body.history).toHaveLength(1);
    expect(body.history[0]).toMatchObject({ via: 'api', applies: 'next-session', previous: {}, settings });
    expect(body.history[0].by).toMatch(/^lab tester \(token sha256:[0-9a-f]{8}\)$/);
    expect(Date.now() - Date.parse(body.history[0].at)).toBeLessThan(60_000);
  }, 120_000);

  it('decodes an STP v1 interleaved vector with the settings the CLI sets', async () => {
    const name = 'v1_interleave';
    const expected = await decodeWithStpConfig(name);
    await cli(
      ['link', 'set', '--rig', 'rigP', '--link', 'stp2', '--protocol', 'stp', 'version=1'],
      backendsEnv(pipeline.env),
    );
    const shown = await cli(['link', 'show', '--rig', 'rigP', '--link', 'stp2'], backendsEnv(pipeline.env));
    expect(shown).toMatch(/version = 1/);
    expect(shown).toMatch(/via cli \(next-session\)/);
    const stored = await replayStored('rigP', 'stp2', 'stp', fixturePath('stp', `${name}.stp`));
    expect(stored.map(decodedApartFromHostTime)).toEqual(expected.map(decodedApartFromHostTime));
  }, 120_000);

  it('decodes a QS capture joined mid-run with the sizes of its .qspy-args as qspy printed it', async () => {
    const name = 'defer_midstream_sized';
    const settings = settingsFromQspyArgs(readFileSync(fixturePath('qs', `${name}.qspy-args`), 'utf8'));
    expect(settings).toEqual({ objPtrSize: 8, funPtrSize: 8, queueCtrSize: 2 });
    // The link is known (a first session streamed) before it gets its settings.
    await replayStored('rigP', 'qs1', 'qs', fixturePath('qs', 'dpp_qv.qs'));
    const put = await putSettings(await linkId('rigP', 'qs1'), { settings });
    expect(put.statusCode, put.body).toBe(200);
    const stored = await replayStored('rigP', 'qs1', 'qs', fixturePath('qs', `${name}.qs`));
    expect(stored.map(decoded)).toEqual((await decodeWithQsSizes(name, settings)).map(decoded));
    // Every line qspy printed with those options is there, in order, its AO-Defer lines with
    // two dictionary misses included.
    expect(printedLines(stored)).toEqual(qspyLines(name));
  }, 120_000);

  it('takes the same settings from replay flags', async () => {
    const name = 'defer_midstream_sized';
    const stored = await replayStored('rigP', 'qs2', 'qs', fixturePath('qs', `${name}.qs`), [
      '--obj-ptr-size',
      '8',
      '--fun-ptr-size',
      '8',
      '--queue-ctr-size',
      '2',
    ]);
    const settings = settingsFromQspyArgs(readFileSync(fixturePath('qs', `${name}.qspy-args`), 'utf8'));
    expect(stored.map(decoded)).toEqual((await decodeWithQsSizes(name, settings)).map(decoded));
  }, 120_000);

  it('refuses settings that do not fit the protocol with a 400 naming the setting, and needs the control scope', async () => {
    await replayStored('rigP', 'qs3', 'qs', fixturePath('qs', 'dpp_qv.qs'));
    const id = await linkId('rigP', 'qs3');
    const wrongSize = await putSettings(id, { settings: { objPtrSize: 3 } });
    expect(wrongSize.statusCode).toBe(400);
    expect(wrongSize.json().detail).toMatch(/objPtrSize/);
    const unknown = await putSettings(id, { settings: { littleEndianMasters: [1] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toMatch(/unknown qs link setting 'littleEndianMasters'/);
    const readOnly = await putSettings(id, { settings: { objPtrSize: 8 } }, READ_TOKEN);
    expect(readOnly.statusCode).toBe(403);
    const missing = await putSettings(999_999, { settings: {} });
    expect(missing.statusCode).toBe(404);
    expect(
      (await pipeline.db.selectFrom('link_settings_changes').selectAll().where('link_id', '=', id).execute()).length,
    ).toBe(0);
  }, 120_000);

  it("applies at once when asked: the gateway starts a new session on the same connection, decoded with the new settings and its address's", async () => {
    const port = await freePort();
    // The address gives one setting (qspy's -Q2); the others come from the API.
    const gateway = await startService('gateway', pipeline.env, {
      TRACEHUB_LINKS: `qs/rigP/tcp1=tcp-listen:127.0.0.1:${port}?queueCtrSize=2`,
    });
    const target = await connectTarget(port);
    try {
      target.write(readFileSync(fixturePath('qs', 'dpp_qv.qs')));
      const sessions = await waitForSessions(pipeline.db, 'rigP', 'tcp1', 100);
      const put = await putSettings(await linkId('rigP', 'tcp1'), {
        settings: { objPtrSize: 8, funPtrSize: 8 },
        apply: 'now',
      });
      expect(put.statusCode, put.body).toBe(200);
      expect(put.json().applies).toBe('now');
      expect(put.json().session).toMatch(/./);
      expect(put.json().session).not.toBe(sessions[0]);
      // The first session ended; the target is still connected.
      await storedSession(pipeline.db, sessions[0]);
      expect(target.destroyed).toBe(false);
      // On the same connection, a target joined mid-run: decoded with the sizes the API and the
      // address gave (qspy -O8 -F8 -Q2), exactly as qspy printed it.
      const name = 'defer_midstream_sized';
      await new Promise<void>((resolve) => target.end(readFileSync(fixturePath('qs', `${name}.qs`)), () => resolve()));
      const stored = await storedSession(pipeline.db, put.json().session);
      expect(printedLines(stored)).toEqual(qspyLines(name));
    } finally {
      target.destroy();
      await stopAll([gateway]);
    }
  }, 120_000);
});
