// Every STP v1 vector through the pipeline, 20 times each way: replayed as fast as it goes in
// small reads (a capture has no pauses but its settings'), and delivered live over TCP in random
// pieces with random gaps shorter than the pause mark of a network-fed link (delivery jitter,
// not pauses of the line). Every run must decode exactly as `tracehub decode` decodes the file.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { upsertLink } from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { fixturesDir, seededRandom, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTarget, writeTo } from '../support/tcp-target.js';
import { decodedApartFromHostTime, offlineDecode, storedChunks, storedSession } from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';
import { replayCapture, stpSettings } from './stp-vector-links.js';

const RUNS = 20;
/** Gaps between pieces of the jittered delivery: 0 to this, ms (the default pause mark is 50 ms). */
const MAX_GAP_MS = 5;

/** Where the vectors' configs without their pauses are written. */
const work = mkdtempSync(join(tmpdir(), 'th-stp-jitter-'));
let pipeline: PipelineWithApi;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('stpjitter', { services: ['decoder-stp', 'storage'] });
}, 120_000);

afterAll(async () => {
  await pipeline?.close();
  rmSync(work, { recursive: true, force: true });
});

interface Vector {
  name: string;
  file: string;
  /** The vector's config without pauses: what a stream delivered without pausing decodes with. */
  configFile: string;
  settings: Record<string, unknown>;
  expected: ReturnType<typeof decodedApartFromHostTime>[];
}

async function vectorsV1(): Promise<Vector[]> {
  const names = readdirSync(join(fixturesDir, 'stp'))
    .filter((f) => f.startsWith('v1_') && f.endsWith('.stp'))
    .map((f) => f.slice(0, -'.stp'.length));
  return Promise.all(
    names.map(async (name) => {
      const file = join(fixturesDir, 'stp', `${name}.stp`);
      const vector = JSON.parse(readFileSync(join(fixturesDir, 'stp', `${name}.expected.json`), 'utf8'));
      const configFile = join(work, `${name}.json`);
      writeFileSync(configFile, JSON.stringify({ ...vector, config: { ...vector.config, pauses: [] } }));
      const expected = (await offlineDecode(file, 'stp', ['--stp-config', configFile])).map(decodedApartFromHostTime);
      return { name, file, configFile, settings: stpSettings(vector.config), expected };
    }),
  );
}

/** The link `rigJ/<name>`, with the vector's settings. */
async function vectorLink(name: string, vector: Vector) {
  await upsertLink(pipeline.db, { rig: 'rigJ', name, protocol: 'stp', settings: vector.settings });
  return { protocol: 'stp' as const, rig: 'rigJ', link: name };
}

/** Writes `bytes` to `target` in pieces of 1 to 256 bytes, each after a gap of 0 to MAX_GAP_MS. */
async function deliverWithJitter(target: net.Socket, bytes: Buffer, random: () => number): Promise<void> {
  for (let at = 0; at < bytes.length; ) {
    const size = 1 + Math.floor(random() * 256);
    await writeTo(target, bytes.subarray(at, at + size));
    at += size;
    const gap = Math.floor(random() * (MAX_GAP_MS + 1));
    if (gap > 0) await new Promise((r) => setTimeout(r, gap));
  }
}

describe('STP v1 vectors through the pipeline, run after run', () => {
  it(`decode as decode does in ${RUNS} runs each, replayed at full pace and delivered with jitter over TCP`, async () => {
    const vectors = await vectorsV1();
    expect(vectors.length).toBeGreaterThanOrEqual(9);
    for (const v of vectors) expect(v.expected.length, v.name).toBeGreaterThan(0);
    const sessions = new Map<string, { vector: Vector; run: string }>();

    // One vector at a time, the jittered deliveries first: the gaps are this process's timers,
    // and nothing else runs here meanwhile to stretch one of them past the pause mark.
    for (const [i, vector] of vectors.entries()) {
      const random = seededRandom(1000 + i);
      const jittered = await vectorLink(`jit${i}`, vector);
      const bytes = readFileSync(vector.file);
      // Live over TCP, one connection a run, the gateway's default pause mark.
      const source = new TcpListenSource('127.0.0.1', 0);
      const gateway = new Gateway({ bus: pipeline.bus, link: jittered, source, control: false, flushMs: 5 });
      await gateway.start();
      try {
        for (let run = 0; run < RUNS; run++) {
          const target = await connectTarget(source.boundPort);
          await deliverWithJitter(target, bytes, random);
          await new Promise<void>((r) => target.end(() => r()));
          const session = await until(
            `${vector.name}: the gateway to end run ${run + 1}`,
            () =>
              gateway.publisher.sessions.length === run + 1 &&
              gateway.connection().target === null &&
              gateway.publisher.sessions[run],
            15_000,
            10,
          );
          sessions.set(session, { vector, run: `${vector.name} jittered ${run + 1}` });
        }
        await gateway.publisher.idle();
      } finally {
        await gateway.stop();
      }
    }
    // Replayed as fast as it goes, in reads of 1 to 256 bytes: many chunks, received whenever
    // the machine gets to them.
    for (const [i, vector] of vectors.entries()) {
      const random = seededRandom(2000 + i);
      const replayed = await vectorLink(`max${i}`, vector);
      for (let run = 0; run < RUNS; run++) {
        const session = await replayCapture(pipeline.bus, replayed, vector.file, 1 + Math.floor(random() * 256));
        sessions.set(session, { vector, run: `${vector.name} replay ${run + 1}` });
      }
    }

    expect(sessions.size).toBe(vectors.length * RUNS * 2);
    for (const [session, { vector, run }] of sessions) {
      const stored = (await storedSession(pipeline.db, session)).map(decodedApartFromHostTime);
      if (JSON.stringify(stored) !== JSON.stringify(vector.expected)) {
        // The pauses the gateway marked say why.
        const pauses = (await storedChunks(pipeline.db, session)).flatMap((c) =>
          [{ pauseNs: c.pauseNs ?? 0n }, ...(c.segments ?? []).slice(1)]
            .filter((p) => p.pauseNs > 0n)
            .map((p) => `chunk ${c.chunk}: ${Number(p.pauseNs) / 1e6} ms`),
        );
        expect(stored, `${run}; pauses marked: ${pauses.join(', ')}`).toEqual(vector.expected);
      }
    }
  }, 400_000);
});
