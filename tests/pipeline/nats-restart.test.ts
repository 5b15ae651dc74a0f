import { readFileSync } from 'node:fs';
import net from 'node:net';
import { type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { type Database, sessionLinkChunks } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { fixturePath, freePort, PrivateNats, sleep, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decoded,
  metric,
  type PipelineTestRun,
  startPipelineTestRun,
  startService,
  storedLinkBytes,
  storedSession,
  waitForSessions,
} from './harness.js';

let nats: PrivateNats;
let run: PipelineTestRun;
let db: Kysely<Database>;

beforeAll(async () => {
  run = await startPipelineTestRun('natsrestart');
  ({ db } = run);
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
    const gatewayHealth = JSON.parse(gateway.stdout.find((l) => /"msg":"ready/.test(l))!).healthPort as number;

    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const stream = Buffer.concat(Array.from({ length: 40 }, () => one));
    const target = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(s));
      s.once('error', reject);
    });
    // About 100 kB/s for 4 s; NATS is down from 1 s to 4 s.
    const piece = 5000;
    let killedAt = -1;
    for (let at = 0, i = 0; at < stream.length; at += piece, i++) {
      await new Promise<void>((r) => target.write(stream.subarray(at, at + piece), () => r()));
      await sleep(50);
      if (i === 20) {
        killedAt = at;
        await nats.kill();
      }
      if (i === 80) await nats.resume();
    }
    expect(killedAt).toBeGreaterThan(0);
    await new Promise<void>((r) => target.end(() => r()));

    const sessions = await waitForSessions(db, 'rigN', 'uart0', 200);
    expect(sessions).toHaveLength(1);
    const stored = await storedSession(db, sessions[0], 90_000);

    // What JetStream acknowledged is what storage kept of the link (every chunk once, in
    // order, checked as it is read): decode that, chunk by chunk, as the decoder does.
    const expected: TraceRecord[] = [];
    let lostTotal = 0;
    let published = 0;
    const publishedBytes: Uint8Array[] = [];
    const decoder = new QsDecoder();
    let seq = 0;
    await storedLinkBytes(db, sessions[0], 90_000);
    for await (const chunk of sessionLinkChunks(db, sessions[0])) {
      lostTotal += chunk.lost;
      published += chunk.data.length;
      publishedBytes.push(chunk.data);
      const ctx = { hostNs: chunk.recvNs, lostBytes: chunk.lost };
      const place = {
        rig: 'rigN',
        link: 'uart0',
        session: sessions[0],
        chunk: chunk.chunk,
        protocol: 'qs' as const,
        hostNs: chunk.recvNs,
        seq: 0,
      };
      const emit = (r: Parameters<Parameters<QsDecoder['push']>[2]>[0]) =>
        expected.push(toTraceRecord(r, { ...place, seq: seq++ }));
      if (chunk.data.length > 0 || chunk.lost > 0) decoder.push(chunk.data, ctx, emit);
      if (chunk.eos) decoder.end(ctx, emit);
    }
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
    const link = await storedLinkBytes(db, sessions[0], 90_000);
    expect(link.bytes.equals(Buffer.concat(publishedBytes))).toBe(true);
    expect(link.lost).toBe(lostTotal);
  }, 180_000);
});
