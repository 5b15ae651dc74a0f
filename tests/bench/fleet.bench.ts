/**
 * The fleet benchmark: the whole system (one gateway with a tcp-listen link per simulated rig,
 * decoder-qs, decoder-stp, storage, api, each as its own process) on real NATS and Postgres,
 * fed by N simulated targets that stream real captures at their link's pace.
 *
 *   npm run bench:fleet -w tests      (needs `npm run build`, NATS_URL and DATABASE_URL)
 *
 * Settings: FLEET_LINKS (64), FLEET_SECONDS (30), FLEET_FAST_EVERY (every 8th link at
 * 921 600 baud, the others at 115 200), FLEET_STP_EVERY (every 4th link STP, the others QS),
 * FLEET_DECODERS and FLEET_STORAGES (1 each: more share the work), FLEET_GATEWAY_FLUSH_MS (the
 * gateway's GATEWAY_FLUSH_MS: how often a link's bytes become a chunk).
 *
 * QS links stream slices of bench/qs/big_stress.qs.gz, STP links the coresight_stm_only
 * capture over and over, each at baud/10 bytes a second in 10 ms writes. Every 250 ms the
 * bench asks Postgres for the newest queryable record of every link's session: its age (now
 * minus its gateway receive time) is the link's ingest-to-query latency at that moment, an
 * upper bound that includes the gap between two records. Prints per-link latency p50/p99,
 * fairness (the slowest link's p50 against the median link's), what was stored, and each
 * service's CPU (cores) and peak RSS; writes test-output/bench/fleet.json.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { connectTargetOnceListening } from '../support/tcp-target.js';
import { benchRun, countCpu, freePort, percentile, shared, start, writeFigures } from './bench-support.js';

const links = Number(process.env.FLEET_LINKS ?? 64);
const seconds = Number(process.env.FLEET_SECONDS ?? 30);
const fastEvery = Number(process.env.FLEET_FAST_EVERY ?? 8);
const stpEvery = Number(process.env.FLEET_STP_EVERY ?? 4);
const decoderCount = Number(process.env.FLEET_DECODERS ?? 1);
const storageCount = Number(process.env.FLEET_STORAGES ?? 1);
/** The gateway's chunk flush interval, ms (its default, 20, when unset): each link's chunk rate. */
const gatewayFlushMs = process.env.FLEET_GATEWAY_FLUSH_MS;

interface SimulatedLink {
  name: string;
  protocol: 'qs' | 'stp';
  baud: number;
  port: number;
  source: Buffer;
  offset: number;
  sent: number;
  socket?: net.Socket;
  session?: string;
  /** Ages (ms) of the link's newest queryable record, one per poll once it has one. */
  ages: number[];
}

async function main(): Promise<void> {
  const qsCapture = gunzipSync(readFileSync(join(shared, 'bench/qs/big_stress.qs.gz')));
  const stpCapture = readFileSync(join(shared, 'fixtures/stp/coresight_stm_only.stp'));
  const fleet: SimulatedLink[] = [];
  // Ports nobody listens on now, each once (two asks may be given the same free port).
  const taken = new Set<number>();
  const port = async () => {
    for (;;) {
      const p = await freePort();
      if (!taken.has(p)) {
        taken.add(p);
        return p;
      }
    }
  };
  for (let i = 0; i < links; i++) {
    const protocol = stpEvery > 0 && i % stpEvery === stpEvery - 1 ? 'stp' : 'qs';
    const source = protocol === 'qs' ? qsCapture : stpCapture;
    fleet.push({
      name: `rig${String(i).padStart(3, '0')}`,
      protocol,
      baud: fastEvery > 0 && i % fastEvery === 0 ? 921_600 : 115_200,
      port: await port(),
      source,
      // Each QS link starts elsewhere in the capture (a frame boundary is found by the decoder).
      offset: protocol === 'qs' ? Math.floor((i * source.length) / links) : 0,
      sent: 0,
      ages: [],
    });
  }
  const offeredBytes = fleet.reduce((sum, l) => sum + l.baud / 10, 0);

  const linkSpecs = fleet.map((l) => `${l.protocol}/${l.name}/uart0=tcp-listen:127.0.0.1:${l.port}`).join(';');
  await benchRun(
    'fleet',
    async (env) => [
      ...Array.from({ length: storageCount }, (_, i) => start('storage', env, `storage-${i + 1}`)),
      ...Array.from({ length: decoderCount }, (_, i) => start('decoder-qs', env, `decoder-qs-${i + 1}`)),
      start('decoder-stp', env),
      start('api', { ...env, API_PORT: String(await port()) }),
      start('gateway', {
        ...env,
        TRACEHUB_LINKS: linkSpecs,
        ...(gatewayFlushMs ? { GATEWAY_FLUSH_MS: gatewayFlushMs } : {}),
      }),
    ],
    async ({ services, db }) => {
      let pacing: NodeJS.Timeout | undefined;
      try {
        process.stdout.write(
          `fleet bench: ${links} links (${fleet.filter((l) => l.protocol === 'stp').length} STP, ` +
            `${fleet.filter((l) => l.baud > 115_200).length} at 921 600 baud, the others at 115 200), ` +
            `${(offeredBytes / 1e6).toFixed(2)} MB/s offered for ${seconds} s; ` +
            `${decoderCount} decoder-qs, ${storageCount} storage, gateway flush ${gatewayFlushMs ?? 'default'} ms\n`,
        );
        for (const l of fleet) l.socket = await connectTargetOnceListening(l.port);

        const cpuUsed = countCpu(services);
        const t0 = performance.now();
        // Every link writes what its baud rate allows every 10 ms, from where its clock says it is.
        pacing = setInterval(() => {
          const elapsed = (performance.now() - t0) / 1000;
          for (const l of fleet) {
            const due = Math.floor((elapsed * l.baud) / 10) - l.sent;
            if (due <= 0) continue;
            let left = due;
            while (left > 0) {
              const at = l.offset % l.source.length;
              const piece = l.source.subarray(at, Math.min(l.source.length, at + left));
              l.socket!.write(piece);
              l.offset += piece.length;
              left -= piece.length;
            }
            l.sent += due;
          }
        }, 10);

        const sessionOf = new Map<string, SimulatedLink>();
        const poll = async () => {
          if (sessionOf.size < fleet.length) {
            const { rows } = await db.query<{ id: string; rig: string }>('select id, rig from sessions');
            for (const r of rows) {
              const l = fleet.find((f) => f.name === r.rig);
              if (l && !l.session) {
                l.session = r.id;
                sessionOf.set(r.id, l);
              }
            }
          }
          const { rows } = await db.query<{ session: string; newest: string }>(
            'select session, max(max_host_ns)::text as newest from record_blocks where session = any($1) group by session',
            [[...sessionOf.keys()]],
          );
          const nowNs = BigInt(Date.now()) * 1_000_000n;
          for (const r of rows) sessionOf.get(r.session)?.ages.push(Number(nowNs - BigInt(r.newest)) / 1e6);
        };
        while (performance.now() - t0 < seconds * 1000) {
          await poll();
          await new Promise((r) => setTimeout(r, 250));
        }
        clearInterval(pacing);
        pacing = undefined;
        const streamed = (performance.now() - t0) / 1000;
        const cpu = cpuUsed();
        const sentBytes = fleet.reduce((sum, l) => sum + l.sent, 0);

        // Latency over the second half of the run (the first fills caches and starts sessions).
        const perLink = fleet.map((l) => {
          const ages = l.ages.slice(Math.floor(l.ages.length / 2)).sort((a, b) => a - b);
          return {
            link: l.name,
            protocol: l.protocol,
            baud: l.baud,
            p50: percentile(ages, 50),
            p99: percentile(ages, 99),
          };
        });
        const p50s = perLink.map((l) => l.p50).sort((a, b) => a - b);
        const allAges = fleet.flatMap((l) => l.ages.slice(Math.floor(l.ages.length / 2))).sort((a, b) => a - b);
        const median = percentile(p50s, 50);
        const slowest = perLink.reduce((a, b) => (b.p50 > a.p50 ? b : a));
        const { rows: stored } = await db.query<{ records: string; lost: string }>(
          'select coalesce(sum(record_count), 0)::text as records, coalesce(sum(link_lost_bytes), 0)::text as lost from sessions',
        );
        const coresUsed = Object.fromEntries(Object.entries(cpu.byProcess).map(([name, s]) => [name, s / streamed]));
        const busyCores = cpu.machineBusy / streamed;

        process.stdout.write(
          `sent ${(sentBytes / 1e6).toFixed(1)} MB in ${streamed.toFixed(1)} s (${(sentBytes / 1e6 / streamed).toFixed(2)} MB/s); ` +
            `${Number(stored[0].records)} records stored by the end, ${Number(stored[0].lost)} bytes dropped by the gateway\n`,
        );
        process.stdout.write(
          `ingest-to-query latency (age of each link's newest queryable record, second half): ` +
            `all links p50 ${percentile(allAges, 50).toFixed(0)} ms, p99 ${percentile(allAges, 99).toFixed(0)} ms; ` +
            `median link p50 ${median.toFixed(0)} ms; slowest link ${slowest.link} (${slowest.protocol}, ${slowest.baud} baud) ` +
            `p50 ${slowest.p50.toFixed(0)} ms = ${(slowest.p50 / median).toFixed(2)}× the median\n`,
        );
        process.stdout.write(
          `CPU (cores) while streaming: machine ${busyCores.toFixed(2)} of 2; ${Object.entries(coresUsed)
            .map(([name, c]) => `${name} ${c.toFixed(2)}`)
            .join(', ')}\n`,
        );
        const figures = {
          links,
          gateway_flush_ms: gatewayFlushMs ? Number(gatewayFlushMs) : null,
          seconds: Number(streamed.toFixed(1)),
          offered_bytes_per_s: offeredBytes,
          sent_bytes: sentBytes,
          records_stored: Number(stored[0].records),
          gateway_dropped_bytes: Number(stored[0].lost),
          latency_all_links_p50_ms: Math.round(percentile(allAges, 50)),
          latency_all_links_p99_ms: Math.round(percentile(allAges, 99)),
          latency_median_link_p50_ms: Math.round(median),
          slowest_link: { ...slowest, p50: Math.round(slowest.p50), p99: Math.round(slowest.p99) },
          fairness_slowest_over_median: Number((slowest.p50 / median).toFixed(2)),
          per_link: perLink.map((l) => ({ ...l, p50: Math.round(l.p50), p99: Math.round(l.p99) })),
          cores_used: Object.fromEntries(Object.entries(coresUsed).map(([k, v]) => [k, Number(v.toFixed(3))])),
          machine_busy_cores: Number(busyCores.toFixed(2)),
        };
        writeFigures('fleet.json', services, figures);
      } finally {
        if (pacing) clearInterval(pacing);
        for (const l of fleet) l.socket?.destroy();
      }
    },
  );
}

main().catch((err) => {
  process.stderr.write(`fleet bench failed: ${err instanceof Error ? err.message : `${err}`}\n`);
  process.exit(1);
});
