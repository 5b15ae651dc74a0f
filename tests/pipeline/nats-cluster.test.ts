// The pipeline on a 3-node JetStream cluster (streams and buckets at 3 replicas, every service
// given all three URLs): the raw stream's leader is killed mid-stream and brought back, then a
// second node; nothing is lost or doubled, link bytes included.
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureTopology } from '@tracehub/bus';
import { fixturePath, freePort, PrivateNatsCluster, sleep, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTarget, streamInPieces } from '../support/tcp-target.js';
import {
  connectBus,
  decoded,
  offlineDecode,
  type PipelineTestRun,
  startPipelineTestRun,
  startService,
  storedLinkBytes,
  storedSession,
  waitForSessions,
} from './harness.js';

let cluster: PrivateNatsCluster;
let run: PipelineTestRun;

beforeAll(async () => {
  run = await startPipelineTestRun('natscluster');
  cluster = await PrivateNatsCluster.start(3);
}, 60_000);

afterAll(async () => {
  await run?.close();
  await cluster?.stop();
});

/** The node leading a stream; asked again while the cluster is between leaders (or our node is away). */
async function leaderOf(bus: Awaited<ReturnType<typeof connectBus>>, stream: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      const leader = (await bus.jsm.streams.info(stream)).cluster?.leader;
      if (leader) return leader;
    } catch (err) {
      if (attempt >= 40) throw err;
    }
    await sleep(250);
  }
}

describe('the pipeline on a 3-node JetStream cluster', () => {
  it('loses and doubles nothing when the raw stream leader is killed mid-stream, and then another node', async () => {
    const prefix = uniquePrefix('plcl');
    const env = { natsUrl: cluster.url, databaseUrl: run.databaseUrl, prefix };
    const bus = await connectBus({ url: cluster.url, name: 'cluster-check', prefix });
    // Waits for the cluster to elect its leader, then makes the streams and buckets at 3 replicas.
    await ensureTopology(bus, { replicas: 3 });
    const info = await bus.jsm.streams.info(bus.names.rawStream);
    expect(info.config.num_replicas).toBe(3);

    const port = await freePort();
    const replicated = { TRACEHUB_STREAM_REPLICAS: '3' };
    run.services.push(
      await startService('gateway', env, {
        ...replicated,
        TRACEHUB_LINKS: `qs/rigC/uart0=tcp-listen:127.0.0.1:${port}`,
        GATEWAY_CHUNK_BYTES: '4096',
      }),
      await startService('decoder-qs', env, replicated),
      await startService('storage', env, replicated),
    );

    const one = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const stream = Buffer.concat(Array.from({ length: 40 }, () => one));
    const target = await connectTarget(port);
    // About 100 kB/s; the raw stream's leader dies at 1 s and is back at 2.5 s, then another
    // node dies at 3.5 s and is back at 5 s.
    let firstKilled = '';
    let secondKilled = '';
    await streamInPieces(target, stream, 5000, 50, async (i) => {
      if (i === 20) {
        firstKilled = await leaderOf(bus, bus.names.rawStream);
        await cluster.node(firstKilled).kill();
      }
      if (i === 50) await cluster.node(firstKilled).resume();
      if (i === 70) {
        const leader = await leaderOf(bus, bus.names.rawStream);
        secondKilled = cluster.nodes
          .map((_, n) => `${firstKilled.slice(0, firstKilled.lastIndexOf('-'))}-${n + 1}`)
          .find((name) => name !== firstKilled && name !== leader)!;
        await cluster.node(secondKilled).kill();
      }
      if (i === 100) await cluster.node(secondKilled).resume();
    });
    expect(firstKilled).not.toBe('');
    expect(secondKilled).not.toBe('');
    await new Promise<void>((r) => target.end(() => r()));

    const sessions = await waitForSessions(run.db, 'rigC', 'uart0', 200);
    expect(sessions).toHaveLength(1);
    const stored = await storedSession(run.db, sessions[0], 90_000);
    const file = join(tmpdir(), `th-cluster-${process.pid}.qs`);
    writeFileSync(file, stream);
    const expected = await offlineDecode(file, 'qs');
    expect(stored.length).toBe(expected.length);
    expect(stored.map(decoded)).toEqual(expected.map(decoded));
    expect(stored.filter((r) => r.name === 'LINK_LOST')).toHaveLength(0);
    const link = await storedLinkBytes(run.db, sessions[0], 90_000);
    expect(link.lost).toBe(0);
    expect(link.bytes.equals(stream)).toBe(true);
    await bus.close();
  }, 180_000);
});
