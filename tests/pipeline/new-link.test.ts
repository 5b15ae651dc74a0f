// A link that starts is claimed at once: its gateway announces the session's first chunk and
// a decoder wakes for it, so the first records of a brand-new link come as fast as later ones,
// though the decoder looks at the raw stream only every 5 s here.
import { readFileSync } from 'node:fs';
import { connectBus, ensureTopology } from '@tracehub/bus';
import { LinkPublisher } from '@tracehub/link';
import { fixturePath, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningProcess } from '../foundation/processes.js';
import { removeBusPrefix, requireBuild, startService, stopAll } from './harness.js';

/** The decoder's look for new links: far longer than a new link may wait to be taken up. */
const TICK_MS = 5000;
const prefix = uniquePrefix('plnew');
const procs: RunningProcess[] = [];
let close: (() => Promise<void>) | undefined;

afterAll(async () => {
  await stopAll(procs);
  await close?.();
  await removeBusPrefix(natsUrl(), prefix);
});

describe('a brand-new link', () => {
  it('has its first records decoded well within a second, though the decoder polls every 5 s', async () => {
    requireBuild();
    const bus = await connectBus({ url: natsUrl(), name: 'new-link-check', prefix });
    close = () => bus.close();
    await ensureTopology(bus);
    // No database is needed for this: the decoder reads settings only when a session starts,
    // and a link without stored settings decodes with none. It still wants a URL.
    procs.push(
      await startService(
        'decoder-qs',
        {
          natsUrl: natsUrl(),
          databaseUrl: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
          prefix,
        },
        { DECODER_TICK_MS: String(TICK_MS) },
      ),
    );
    const capture = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const link = { protocol: 'qs' as const, rig: 'fresh', link: `new${i}` };
      const firstRecords = new Promise<number>((resolve) => {
        const sub = bus.nc.subscribe(bus.names.recSubject('qs', link.rig, link.link), {
          callback: () => {
            sub.unsubscribe();
            resolve(performance.now());
          },
        });
      });
      await bus.nc.flush();
      const publisher = new LinkPublisher({ bus, link, flushMs: 5 });
      publisher.connected('a target');
      const sent = performance.now();
      publisher.data(capture);
      latencies.push((await firstRecords) - sent);
      publisher.disconnected('done');
      await publisher.close();
    }
    console.log(`first records of a new link after ${latencies.map((ms) => ms.toFixed(0)).join(', ')} ms`);
    // Taken up when announced, not at the worker's next look for links (every 5 s here): how
    // soon is the pipeline bench's measure.
    for (const ms of latencies) expect(ms).toBeLessThan(TICK_MS);
  }, 60_000);
});
