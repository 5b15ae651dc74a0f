import { readFileSync } from 'node:fs';
import { fixturePath, freePort, natsUrl, PrivatePostgres, sleep, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../foundation/processes.js';
import { connectTarget, writeTo } from '../support/tcp-target.js';
import {
  decodeQsChunks,
  healthPortOf,
  metric,
  type PipelineTestRun,
  removeBusPrefix,
  startPipelineTestRun,
  startService,
  storedChunks,
  storedLinkBytes,
  storedSession,
  waitForSessions,
} from './harness.js';

/**
 * Postgres stopped for longer than the streams can hold, with three links streaming at a
 * fixed rate: the record stream fills and refuses, the decoders hold their links, the raw
 * stream fills and refuses, the gateway buffers and then drops, oldest first, saying so in
 * th-lost. Small stream limits make that take seconds: at 3 × 100 kB/s (about 13 000
 * records/s), the 1 MiB record stream is full in about 3 s, the 2 MiB raw stream in about 7 s
 * (storage cannot keep the link bytes either), each link's 128 KiB gateway buffer 1.3 s later;
 * Postgres is away for 15 s.
 */
const RATE_BYTES_PER_S = 100_000;
const TICK_MS = 50;
const BEFORE_MS = 2000;
const OUTAGE_MS = 15_000;
const AFTER_MS = 3000;
const LINKS = ['uart0', 'uart1', 'uart2'];
const RIG = 'rigPG';

let pg: PrivatePostgres;
let run: PipelineTestRun;
let prefix: string;

beforeAll(async () => {
  pg = await PrivatePostgres.start();
  run = await startPipelineTestRun('pgout', pg.url());
  prefix = uniquePrefix('pgout');
}, 60_000);

afterAll(async () => {
  await run?.close();
  await pg?.stop();
  if (prefix) await removeBusPrefix(natsUrl(), prefix);
});

describe('the pipeline while Postgres is away longer than the streams hold', () => {
  it('stores every record or covers it with a loss record, and only the gateway drops', async () => {
    const env = { natsUrl: natsUrl(), databaseUrl: pg.url(), prefix };
    const limits = { TRACEHUB_RAW_MAX_BYTES: String(2 << 20), TRACEHUB_REC_MAX_BYTES: String(1 << 20) };
    const ports = await Promise.all(LINKS.map(() => freePort()));
    const gateway = await startService('gateway', env, {
      ...limits,
      TRACEHUB_LINKS: LINKS.map((l, i) => `qs/${RIG}/${l}=tcp-listen:127.0.0.1:${ports[i]}`).join(';'),
      GATEWAY_BUFFER_BYTES: String(128 * 1024),
      GATEWAY_CHUNK_BYTES: '4096',
    });
    run.services.push(gateway);
    const decoder = await startService('decoder-qs', env, limits);
    const storage = await startService('storage', env, limits);
    run.services.push(decoder, storage);
    const gatewayMetrics = healthPortOf(gateway);
    const decoderMetrics = healthPortOf(decoder);
    const readyz = async (p: RunningProcess) => (await fetch(`http://127.0.0.1:${healthPortOf(p)}/readyz`)).status;
    /** /readyz of storage and the decoder, as seen while Postgres was away. */
    const readyWhileAway = { storage: new Set<number>(), decoder: new Set<number>() };

    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const totalMs = BEFORE_MS + OUTAGE_MS + AFTER_MS;
    const perTick = (RATE_BYTES_PER_S * TICK_MS) / 1000;
    const stream = Buffer.concat(
      Array.from({ length: Math.ceil((perTick * (totalMs / TICK_MS)) / one.length) }, () => one),
    );
    const targets = await Promise.all(ports.map(connectTarget));
    const sent = LINKS.map(() => 0);
    let paused = false;
    let resumed = false;
    const fill = { raw: 0, rec: 0 };
    const started = Date.now();
    let sampling = Promise.resolve();
    for (let tick = 0; ; tick++) {
      const now = Date.now() - started;
      if (now >= totalMs) break;
      const at = tick * perTick;
      if (at >= stream.length) break;
      const piece = stream.subarray(at, at + perTick);
      await Promise.all(targets.map((t) => writeTo(t, piece)));
      for (let i = 0; i < LINKS.length; i++) sent[i] += piece.length;
      if (!paused && now >= BEFORE_MS) {
        paused = true;
        await pg.pause();
      }
      if (paused && !resumed && now >= BEFORE_MS + OUTAGE_MS) {
        resumed = true;
        await pg.resume();
      }
      // How full the streams got, as the gateway's metrics show it.
      if (paused && !resumed && tick % 10 === 0) {
        sampling = sampling.then(async () => {
          fill.raw = Math.max(fill.raw, await metric(gatewayMetrics, 'tracehub_stream_fill_ratio', '_TRACE_RAW"'));
          fill.rec = Math.max(fill.rec, await metric(gatewayMetrics, 'tracehub_stream_fill_ratio', '_TRACE_REC"'));
          if (resumed) return;
          readyWhileAway.storage.add(await readyz(storage));
          readyWhileAway.decoder.add(await readyz(decoder));
        });
      }
      const next = started + (tick + 1) * TICK_MS;
      await sleep(Math.max(0, next - Date.now()));
    }
    expect(resumed).toBe(true);
    await sampling;
    // While Postgres was away, storage and the decoder said they could not do their job.
    expect(readyWhileAway.storage.has(503)).toBe(true);
    expect(readyWhileAway.decoder.has(503)).toBe(true);
    await Promise.all(targets.map((t) => new Promise<void>((r) => t.end(() => r()))));

    // Both streams filled up and refused, the decoders held, and the gateway dropped.
    expect(fill.rec).toBeGreaterThan(0.9);
    expect(fill.raw).toBeGreaterThan(0.9);
    expect(await metric(decoderMetrics, 'tracehub_decoder_publish_refused_total', 'reason="full"')).toBeGreaterThan(0);
    expect(await metric(gatewayMetrics, 'tracehub_gateway_publish_refused_total')).toBeGreaterThan(0);

    let lostAll = 0;
    let publishedAll = 0;
    for (let i = 0; i < LINKS.length; i++) {
      const sessions = await waitForSessions(run.db, RIG, LINKS[i], 100);
      expect(sessions).toHaveLength(1);
      const session = sessions[0];
      // Storage kept every chunk the gateway published, once and in order (checked as read).
      const link = await storedLinkBytes(run.db, session, 40_000);
      // Every byte the target sent was published or counted as dropped in th-lost.
      expect(link.bytes.length + link.lost).toBe(sent[i]);
      lostAll += link.lost;
      publishedAll += link.bytes.length;
      // The session is complete: as many records stored as the decoder published...
      const stored = await storedSession(run.db, session, 40_000);
      // ...and they are what those chunks decode to, loss records where bytes were dropped.
      const expected = decodeQsChunks(await storedChunks(run.db, session), { rig: RIG, link: LINKS[i], session });
      expect(stored.length).toBe(expected.length);
      for (let r = 0; r < expected.length; r++) {
        const [s, e] = [stored[r], expected[r]];
        if (s.seq !== e.seq || s.name !== e.name || s.text !== e.text || s.chunk !== e.chunk)
          expect({ seq: s.seq, name: s.name, text: s.text, chunk: s.chunk }).toEqual({
            seq: e.seq,
            name: e.name,
            text: e.text,
            chunk: e.chunk,
          });
      }
      const reported = stored.filter((r) => r.name === 'LINK_LOST').reduce((n, r) => n + Number(r.fields.lostBytes), 0);
      expect(reported).toBe(link.lost);
    }
    // The outage outlasted what the streams and buffers hold: the gateway dropped, and said so.
    expect(lostAll).toBeGreaterThan(0);
    expect(await metric(gatewayMetrics, 'tracehub_gateway_bytes_dropped_total')).toBe(lostAll);
    expect(await metric(gatewayMetrics, 'tracehub_gateway_bytes_published_total')).toBe(publishedAll);
    // And ready again once it was back.
    expect([await readyz(storage), await readyz(decoder)]).toEqual([200, 200]);
  }, 120_000);
});
