// STP v1 pauses through the pipeline: a target that pauses where a reference vector says, on a
// live tcp-listen link. The gateway marks the pauses inside its chunks (th-segments), the
// decoder resynchronises on them, storage keeps them with the link's bytes, and a re-decode
// from those bytes gives the same records: those `tracehub decode --stp-config` gives with the
// vector's pauses.
import { readFileSync } from 'node:fs';
import { redecodeSession } from '@tracehub/decoders';
import { fixturePath, freePort, natsUrl, uniquePrefix, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTarget, writeTo } from '../support/tcp-target.js';
import {
  decodedApartFromHostTime,
  offlineDecode,
  type PipelineTestRun,
  startPipelineTestRun,
  startService,
  storedSession,
  waitForSessions,
} from './harness.js';

let run: PipelineTestRun;
/**
 * The gateway's GATEWAY_NETWORK_PAUSE_MS: the shortest idle time of a tcp-listen link taken as
 * a pause. Lower than the default 50 ms, for a wide margin on both sides of a pause under the
 * vectors' 100 ms max on a busy machine; each piece here is one write, so no delivery jitter
 * comes between its bytes.
 */
const NETWORK_PAUSE_MS = 20;
const ports: Record<string, number> = {};
const VECTORS = ['v1_unfinished_pause', 'v1_illegal_opcode'];

interface Vector {
  config: {
    max_pause_ms: number;
    resync_pause_ms: number;
    start: string;
    pauses: Array<{ at_byte: number; ms: number }>;
  };
}

beforeAll(async () => {
  run = await startPipelineTestRun('stppauses');
  const env = { natsUrl: natsUrl(), databaseUrl: run.databaseUrl, prefix: uniquePrefix('stpp') };
  const links: string[] = [];
  for (const name of VECTORS) {
    const { config } = JSON.parse(readFileSync(fixturePath('stp', `${name}.expected.json`), 'utf8')) as Vector;
    ports[name] = await freePort();
    const settings = `version=1&start=${config.start.startsWith('synced') ? 'synced' : 'unsynchronised'}&maxPauseMs=${config.max_pause_ms}&resyncPauseMs=${config.resync_pause_ms}`;
    links.push(`stp/rigV/${name}=tcp-listen:127.0.0.1:${ports[name]}?${settings}`);
  }
  // Chunks are sealed by size and age only; a slow flush puts each stream's pauses inside one chunk.
  run.services.push(
    await startService('gateway', env, {
      TRACEHUB_LINKS: links.join(';'),
      GATEWAY_FLUSH_MS: '1000',
      GATEWAY_NETWORK_PAUSE_MS: String(NETWORK_PAUSE_MS),
    }),
    await startService('decoder-stp', env),
    await startService('storage', env),
  );
}, 90_000);

afterAll(async () => {
  await run?.close();
});

describe('STP v1 pauses on a live link', () => {
  for (const name of VECTORS) {
    it(`${name}: decoded, stored and re-decoded as decode does with the vector's pauses`, async () => {
      const vectorFile = fixturePath('stp', `${name}.expected.json`);
      const { config } = JSON.parse(readFileSync(vectorFile, 'utf8')) as Vector;
      const bytes = readFileSync(fixturePath('stp', `${name}.stp`));
      const expected = (
        await offlineDecode(fixturePath('stp', `${name}.stp`), 'stp', ['--stp-config', vectorFile])
      ).map(decodedApartFromHostTime);
      expect(expected.length).toBeGreaterThan(0);

      const target = await connectTarget(ports[name]);
      let from = 0;
      for (const pause of config.pauses) {
        await writeTo(target, bytes.subarray(from, pause.at_byte));
        // Only which side of the resync and max pauses a pause falls on matters. On a
        // network-fed link a pause is at least its pause mark (shorter gaps are delivery
        // jitter), so a pause under the max is made halfway between the mark and the max (60 ms
        // for the vectors' 5 and 50 ms), one over it 30 ms longer: clear of both on a busy machine.
        const ms = pause.ms < config.max_pause_ms ? (NETWORK_PAUSE_MS + config.max_pause_ms) / 2 : pause.ms + 30;
        await new Promise((r) => setTimeout(r, ms));
        from = pause.at_byte;
      }
      await writeTo(target, bytes.subarray(from));
      await new Promise<void>((r) => target.end(() => r()));

      const [session] = await waitForSessions(run.db, 'rigV', name, 150);
      const stored = await storedSession(run.db, session);
      expect(stored.map(decodedApartFromHostTime)).toEqual(expected);

      // The pauses were kept with the link's bytes: a re-decode gives the same records.
      await waitForLinkBytes(session, bytes.length);
      await redecodeSession(run.db, session);
      const again = await storedSession(run.db, session);
      expect(again.map(decodedApartFromHostTime)).toEqual(expected);
    }, 60_000);
  }
});

async function waitForLinkBytes(session: string, bytes: number): Promise<void> {
  let row: { link_bytes: unknown; ended_at: unknown } | undefined;
  await waitUntil(
    async () => {
      row = await run.db
        .selectFrom('sessions')
        .select(['link_bytes', 'ended_at'])
        .where('id', '=', session)
        .executeTakeFirst();
      return row !== undefined && Number(row.link_bytes) === bytes && row.ended_at !== null;
    },
    30_000,
    `session ${session}: link bytes stored`,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(row)}`);
  });
}
