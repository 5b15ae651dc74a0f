import { readFileSync } from 'node:fs';
import { fixturePath, freePort, PrivateNats, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTarget, streamInPieces } from '../support/tcp-target.js';
import {
  decoded,
  decodeQsChunks,
  healthPortOf,
  metric,
  type PipelineTestRun,
  startPipelineTestRun,
  startService,
  storedChunks,
  storedLinkBytes,
  storedSession,
  waitForSessions,
} from './harness.js';

let nats: PrivateNats;
let run: PipelineTestRun;

beforeAll(async () => {
  run = await startPipelineTestRun('natsrestart');
  nats = await PrivateNats.start();
}, 60_000);

afterAll(async () => {
  await run?.close();
  await nats?.stop();
});

describe('the pipeline across a NATS server restart', () => {
  it('loses nothing acknowledged; th-lost says what the gateway dropped and the decoder reports the matching gap', async () => {
    const prefix = uniquePrefix('plnr');
    const env = { natsUrl: nats.url, databaseUrl: run.databaseUrl, prefix };
    const port = await freePort();
    const gateway = await startService('gateway', env, {
      TRACEHUB_LINKS: `qs/rigN/uart0=tcp-listen:127.0.0.1:${port}`,
      GATEWAY_BUFFER_BYTES: String(64 * 1024),
      GATEWAY_CHUNK_BYTES: '4096',
    });
    run.services.push(gateway, await startService('decoder-qs', env), await startService('storage', env));
    const gatewayHealth = healthPortOf(gateway);

    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const stream = Buffer.concat(Array.from({ length: 40 }, () => one));
    const target = await connectTarget(port);
    // About 100 kB/s for 4 s; NATS is down from 1 s to 4 s.
    let killedAt = -1;
    await streamInPieces(target, stream, 5000, 50, async (i, at) => {
      if (i === 20) {
        killedAt = at;
        await nats.kill();
      }
      if (i === 80) await nats.resume();
    });
    expect(killedAt).toBeGreaterThan(0);
    await new Promise<void>((r) => target.end(() => r()));

    const sessions = await waitForSessions(run.db, 'rigN', 'uart0', 200);
    expect(sessions).toHaveLength(1);
    const stored = await storedSession(run.db, sessions[0], 90_000);

    // What JetStream acknowledged is what storage kept of the link (every chunk once, in
    // order, checked as it is read): decode that, chunk by chunk, as the decoder does.
    await storedLinkBytes(run.db, sessions[0], 90_000);
    const chunks = await storedChunks(run.db, sessions[0]);
    const expected = decodeQsChunks(chunks, { rig: 'rigN', link: 'uart0', session: sessions[0] });
    const lostTotal = chunks.reduce((n, c) => n + c.lost, 0);
    const published = chunks.reduce((n, c) => n + c.data.length, 0);
    const publishedBytes = chunks.map((c) => c.data);
    // And it is what the gateway counted as acknowledged.
    expect(await metric(gatewayHealth, 'tracehub_gateway_bytes_published_total')).toBe(published);
    const dropped = await metric(gatewayHealth, 'tracehub_gateway_bytes_dropped_total');
    // The gateway's buffer (64 KiB) was far smaller than what came while NATS was down.
    expect(lostTotal).toBeGreaterThan(0);
    expect(lostTotal).toBe(dropped);
    expect(published + lostTotal).toBe(stream.length);
    expect(stored.map(decoded)).toEqual(expected.map(decoded));
    // The decoder reported the gateway's loss: as many bytes as th-lost said.
    const reported = stored.filter((r) => r.name === 'LINK_LOST').reduce((n, r) => n + Number(r.fields.lostBytes), 0);
    expect(reported).toBe(lostTotal);
    // The stored link bytes are what the gateway published, each chunk once, with its th-lost.
    const link = await storedLinkBytes(run.db, sessions[0], 90_000);
    expect(link.bytes.equals(Buffer.concat(publishedBytes))).toBe(true);
    expect(link.lost).toBe(lostTotal);
  }, 180_000);
});
