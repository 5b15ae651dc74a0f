// Re-decoding a stored session from its link bytes: after a settings fix (API) and as it was (CLI).
import { connect } from 'node:net';
import type { TraceRecord } from '@tracehub/contracts';
import {
  getLinkByName,
  getSession,
  markSessionEnded,
  rowToTraceRecord,
  sessionDictionaries,
  sessionLinkChunks,
  sessionRecords,
  upsertSession,
} from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { StpStreamWriter } from '@tracehub/stp';
import { fixturePath, freePort, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, READ_TOKEN } from '../api/fixture-data.js';
import {
  backendsEnv,
  cli,
  decoded,
  decodedApartFromHostTime,
  offlineDecode,
  replay,
  storedSession,
} from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';

let pipeline: PipelineWithApi;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('redecode', { services: ['decoder-qs', 'decoder-stp', 'storage'] });
}, 120_000);

afterAll(() => pipeline?.close());

async function stored(session: string): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const row of sessionRecords(pipeline.db, session)) out.push(rowToTraceRecord(row));
  return out;
}

/** POST redecode, again while the link bytes are still being stored (409 `incomplete`). */
async function redecode(session: string, token = CONTROL_TOKEN) {
  for (let attempt = 0; ; attempt++) {
    const res = await pipeline.app.inject({
      method: 'POST',
      url: `/api/v1/sessions/${session}/redecode`,
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.statusCode !== 409 || !/not all stored yet/.test(res.body) || attempt > 50) return res;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('redecode', () => {
  it('puts the markers set on the live link back in their places (they are kept with the link bytes)', async () => {
    const port = await freePort();
    const gateway = new Gateway({
      bus: pipeline.bus,
      link: { protocol: 'stp', rig: 'rigR', link: 'marked' },
      source: new TcpListenSource('127.0.0.1', port, { idleTimeoutMs: 0 }),
      flushMs: 5,
    });
    await gateway.start();
    let session: string;
    try {
      const device = connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve) => device.once('connect', resolve));
      const messages = (from: number, count: number, sync: boolean) => {
        const w = new StpStreamWriter();
        if (sync) w.async().version(3).m8(0x10);
        for (let i = from; i < from + count; i++) w.c8(0x02).data(4, i, 'M');
        return Buffer.from(w.bytes());
      };
      let sent = 0;
      const send = async (bytes: Buffer) => {
        device.write(bytes);
        sent += bytes.length;
        await waitUntil(async () => gateway.publisher.stats.bytesIn === sent, 10_000, 'the bytes read');
      };
      await send(messages(0, 5, true));
      expect(gateway.publisher.mark({ kind: 'user', comment: 'after five' })).toBeDefined();
      await send(messages(5, 3, false));
      gateway.publisher.mark({ kind: 'timeBase', offsetNs: '1000000000' });
      gateway.publisher.mark({ kind: 'user' });
      await send(messages(8, 2, false));
      session = gateway.publisher.sessions[0];
      device.end();
      await waitUntil(
        async () => (await getSession(pipeline.db, session))?.ended_at != null,
        10_000,
        'the session end',
      );
    } finally {
      await gateway.stop();
    }
    const live = await storedSession(pipeline.db, session);
    const summary = (records: TraceRecord[]) =>
      records.map((r) => (r.kind === 'marker' ? `${r.name} ${r.fields.comment ?? ''}` : `${r.fields.data}`));
    expect(summary(live)).toEqual([
      '00000000',
      '00000001',
      '00000002',
      '00000003',
      '00000004',
      'STP_MARKER_02 after five',
      '00000005',
      '00000006',
      '00000007',
      'STP_MARKER_03 Old timestamp!',
      'STP_MARKER_03 New timestamp!',
      'STP_MARKER_02 ',
      '00000008',
      '00000009',
    ]);
    const res = await redecode(session);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ session, records: live.length, previousRecords: live.length });
    // Record for record, bytes and host times included: the markers' places, indexes and times.
    const again = await stored(session);
    expect(again.map((r) => ({ ...decoded(r), hostNs: r.hostNs, chunk: r.chunk }))).toEqual(
      live.map((r) => ({ ...decoded(r), hostNs: r.hostNs, chunk: r.chunk })),
    );
  }, 60_000);

  it('decodes an STP v1 session again with the settings fixed afterwards, replacing its records at once', async () => {
    const name = 'v1_data_sizes_endian';
    const expected = await offlineDecode(fixturePath('stp', `${name}.stp`), 'stp', [
      '--stp-config',
      fixturePath('stp', `${name}.expected.json`),
    ]);
    // Streamed with the defaults (STP v2, big-endian masters): not what the vector's hardware sent.
    const session = await replay(pipeline.env, 'rigR', 'stp1', 'stp', fixturePath('stp', `${name}.stp`));
    const before = await storedSession(pipeline.db, session);
    expect(before.map(decodedApartFromHostTime)).not.toEqual(expected.map(decodedApartFromHostTime));

    const link = await getLinkByName(pipeline.db, 'rigR', 'stp1');
    const put = await pipeline.app.inject({
      method: 'PUT',
      url: `/api/v1/links/${link!.id}/settings`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      payload: { settings: { version: 1, littleEndianMasters: [17], start: 'synced' } },
    });
    expect(put.statusCode, put.body).toBe(200);

    // Readers while it runs see the old records or the new ones, never a mix.
    const seen = new Set<number>();
    let reading = true;
    const reader = (async () => {
      while (reading) seen.add((await stored(session)).length);
    })();
    const res = await redecode(session);
    reading = false;
    await reader;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      session,
      records: expected.length,
      previousRecords: before.length,
      settings: { version: 1, littleEndianMasters: [17] },
    });
    const after = await stored(session);
    expect(after.map(decodedApartFromHostTime)).toEqual(expected.map(decodedApartFromHostTime));
    // Each record's host time is the receive time of the stored chunk that completed it.
    const received = new Map<number, string>();
    for await (const c of sessionLinkChunks(pipeline.db, session)) received.set(c.chunk, c.recvNs.toString());
    for (const r of after) expect(r.hostNs).toBe(received.get(r.chunk));
    for (const n of seen) expect([before.length, after.length]).toContain(n);
    const row = await getSession(pipeline.db, session);
    expect(Number(row!.record_count)).toBe(expected.length);
    expect(Number(row!.record_total)).toBe(expected.length);
  }, 120_000);

  it('gives a QS session back exactly as decode prints it, from the command line', async () => {
    const session = await replay(pipeline.env, 'rigR', 'qs1', 'qs', fixturePath('qs', 'dpp_qv.qs'));
    const before = await storedSession(pipeline.db, session);
    // The link bytes are stored a little after the records: wait for them as the API does.
    let out = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      try {
        out = await cli(['redecode', '--session', session], backendsEnv(pipeline.env));
        break;
      } catch (err) {
        if (!/not all stored yet/.test(String((err as Error).message))) throw err;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    expect(out).toMatch(new RegExp(`^session ${session}: ${before.length} records \\(was ${before.length}\\)`));
    const after = await stored(session);
    expect(after.map(decoded)).toEqual(before.map(decoded));
    expect(after.map(decoded)).toEqual((await offlineDecode(fixturePath('qs', 'dpp_qv.qs'), 'qs')).map(decoded));
  }, 120_000);

  it('gives a QS session streamed in many chunks back record for record through the API, counts and dictionaries included', async () => {
    const file = fixturePath('qs', 'dpp_qv_gap.qs');
    // At the link's pace the gateway publishes a chunk every 10 ms: frames straddle chunks.
    const session = await replay(pipeline.env, 'rigR', 'qs3', 'qs', file, ['--pace', 'original', '--bps', '115200']);
    const before = await storedSession(pipeline.db, session);
    const rowBefore = await getSession(pipeline.db, session);
    const dictionariesBefore = await sessionDictionaries(pipeline.db, session);
    const res = await redecode(session);
    expect(res.statusCode, res.body).toBe(200);
    const result = res.json();
    expect(result).toMatchObject({ session, records: before.length, previousRecords: before.length });
    expect(result.settingsRefused).toBeUndefined();
    expect(result.chunks).toBeGreaterThan(10);
    // Every field: the same seqs, chunks and host times as the live decode stored.
    const after = await stored(session);
    expect(after).toEqual(before);
    expect(after.map(decoded)).toEqual((await offlineDecode(file, 'qs')).map(decoded));
    expect(await sessionDictionaries(pipeline.db, session)).toEqual(dictionariesBefore);
    const rowAfter = await getSession(pipeline.db, session);
    expect(Number(rowAfter!.gap_count)).toBeGreaterThan(0);
    const counts = (r: typeof rowAfter) => ({
      record_count: r!.record_count,
      record_total: r!.record_total,
      error_count: r!.error_count,
      gap_count: r!.gap_count,
      lost_bytes: r!.lost_bytes,
      last_chunk: r!.last_chunk,
      target_info: r!.target_info,
      first_host_time: r!.first_host_time,
      last_host_time: r!.last_host_time,
    });
    expect(counts(rowAfter)).toEqual(counts(rowBefore));
  }, 120_000);

  it('decodes with the defaults, as the decoder service does, when the codec refuses the stored settings', async () => {
    const file = fixturePath('qs', 'dpp_qv.qs');
    const session = await replay(pipeline.env, 'rigR', 'qs4', 'qs', file);
    await storedSession(pipeline.db, session);
    // A .dic the api would not take (it reads one before storing it), as an older build may have kept.
    await pipeline.db
      .updateTable('links')
      .set({ settings: JSON.stringify({ dictionaries: 'not a qspy dictionary file' }) as never })
      .where('rig', '=', 'rigR')
      .where('name', '=', 'qs4')
      .execute();
    const res = await redecode(session);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ settings: {}, settingsRefused: expect.any(String) });
    expect((await stored(session)).map(decoded)).toEqual((await offlineDecode(file, 'qs')).map(decoded));
  }, 120_000);

  it('keeps the settings the link was given at the gateway (replay flags), as the decoder service lays them over the stored ones', async () => {
    const name = 'defer_midstream_sized';
    // qspy -O8 -F8 -Q2 (its .qspy-args): a 64-bit target joined mid-run, before its target info.
    const sizes = ['--obj-ptr-size', '8', '--fun-ptr-size', '8', '--queue-ctr-size', '2'];
    const session = await replay(pipeline.env, 'rigR', 'qs5', 'qs', fixturePath('qs', `${name}.qs`), sizes);
    const before = await storedSession(pipeline.db, session);
    const res = await redecode(session);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().settings).toEqual({ objPtrSize: 8, funPtrSize: 8, queueCtrSize: 2 });
    const after = await stored(session);
    expect(after).toEqual(before);
    const expected = await offlineDecode(fixturePath('qs', `${name}.qs`), 'qs', sizes);
    expect(after.map(decoded)).toEqual(expected.map(decoded));
  }, 120_000);

  it('says why it cannot: unknown session, read-only token, no link bytes kept, not ended', async () => {
    expect((await redecode('no-such-session')).statusCode).toBe(404);
    const session = await replay(pipeline.env, 'rigR', 'qs2', 'qs', fixturePath('qs', 'dpp_qv.qs'));
    await storedSession(pipeline.db, session);
    expect((await redecode(session, READ_TOKEN)).statusCode).toBe(403);
    // A session stored before link bytes were kept (before their migration ran).
    await upsertSession(pipeline.db, {
      id: 'old-1',
      rig: 'rigR',
      link: 'qs2',
      protocol: 'qs',
      startedAt: new Date('2025-01-01T00:00:00Z'),
    });
    await markSessionEnded(pipeline.db, 'old-1', new Date(), 0);
    const res = await redecode('old-1');
    expect(res.statusCode).toBe(409);
    expect(res.json().detail).toMatch(/no stored link bytes/);
    // A session whose end is stored but none of its link bytes yet: not all stored yet, not "never kept".
    await upsertSession(pipeline.db, { id: 'new-1', rig: 'rigR', link: 'qs2', protocol: 'qs', startedAt: new Date() });
    await markSessionEnded(pipeline.db, 'new-1', new Date(), 0);
    const early = await pipeline.app.inject({
      method: 'POST',
      url: '/api/v1/sessions/new-1/redecode',
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(early.statusCode).toBe(409);
    expect(early.json().detail).toMatch(/not all stored yet/);
    // A session still being received.
    await upsertSession(pipeline.db, { id: 'live-1', rig: 'rigR', link: 'qs2', protocol: 'qs', startedAt: new Date() });
    const live = await redecode('live-1');
    expect(live.statusCode).toBe(409);
    expect(live.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(live.json().detail).toMatch(/has not ended/);
  }, 120_000);
});
