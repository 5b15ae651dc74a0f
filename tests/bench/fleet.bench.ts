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
 * gateway's GATEWAY_FLUSH_MS), FLEET_DRAIN_SECONDS (120: how long the end of the run waits for
 * every link's session to be stored whole), FLEET_IDLE=1 (the links connect and send nothing:
 * each service's memory with that many idle links, after FLEET_SECONDS).
 *
 * QS links stream slices of bench/qs/big_stress.qs.gz, STP links the coresight_stm_only
 * capture over and over, each at baud/10 bytes a second in 10 ms writes. Every 250 ms the
 * bench asks Postgres for the newest queryable record of every link's session: its age (now
 * minus its gateway receive time) is the link's ingest-to-query latency at that moment, an
 * upper bound that includes the gap between two records. A link with no record stored by
 * then counts as behind. After the run the targets disconnect; once every session is stored
 * whole (or FLEET_DRAIN_SECONDS passed), each link's stored record count, last seq and error
 * count are checked against an offline decode of exactly the bytes that link sent. Prints
 * per-link latency p50/p99, fairness (the slowest link's p50 against the median link's), what
 * was stored, each service's CPU (cores, and CPU seconds per MB offered) and peak RSS; writes
 * test-output/bench/fleet.json (fleet-idle.json with FLEET_IDLE=1).
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { decoderFactoryFor } from '@tracehub/decoders';
import { connectTargetOnceListening } from '../support/tcp-target.js';
import type { Service } from './bench-support.js';
import { benchRun, countCpu, freePort, percentile, residentMb, shared, start, writeFigures } from './bench-support.js';

const links = Number(process.env.FLEET_LINKS ?? 64);
const seconds = Number(process.env.FLEET_SECONDS ?? 30);
const fastEvery = Number(process.env.FLEET_FAST_EVERY ?? 8);
const stpEvery = Number(process.env.FLEET_STP_EVERY ?? 4);
const decoderCount = Number(process.env.FLEET_DECODERS ?? 1);
const storageCount = Number(process.env.FLEET_STORAGES ?? 1);
/** The gateway's chunk flush interval, ms (its default, 20, when unset): each link's chunk rate. */
const gatewayFlushMs = process.env.FLEET_GATEWAY_FLUSH_MS;
const drainSeconds = Number(process.env.FLEET_DRAIN_SECONDS ?? 120);
const idle = process.env.FLEET_IDLE === '1';

interface SimulatedLink {
  name: string;
  protocol: 'qs' | 'stp';
  baud: number;
  port: number;
  source: Buffer;
  /** Where in `source` the link starts, and where it is now. */
  startOffset: number;
  offset: number;
  sent: number;
  socket?: net.Socket;
  session?: string;
  /** Ages (ms) of the link's newest queryable record, one per poll once it has one. */
  ages: number[];
  /** Polls of the run's second half at which the link had no record stored yet. */
  missed: number;
}

/** A link's ages over the second half of the run. */
function secondHalfAges(l: SimulatedLink): number[] {
  return l.ages.slice(Math.floor(l.ages.length / 2)).sort((a, b) => a - b);
}

/** The records an offline decode of exactly what `l` sent gives: count and error records. */
function offlineDecode(l: SimulatedLink): { records: number; errors: number } {
  const decoder = decoderFactoryFor(l.protocol).create({ protocol: l.protocol, rig: l.name, link: 'uart0' }, {});
  let records = 0;
  let errors = 0;
  const emit = (r: { kind: string }) => {
    records++;
    if (r.kind === 'error') errors++;
  };
  let left = l.sent;
  let at = l.startOffset % l.source.length;
  while (left > 0) {
    const piece = l.source.subarray(at, Math.min(l.source.length, at + left));
    decoder.push(piece, { hostNs: 0n }, emit);
    left -= piece.length;
    at = 0;
  }
  decoder.end({ hostNs: 0n }, emit);
  return { records, errors };
}

/**
 * Waits until every link's session is stored whole (its record total known and reached, and
 * every byte it sent stored or counted as dropped), then compares each with an offline decode.
 */
async function checkEveryLink(
  fleet: SimulatedLink[],
  db: import('pg').Client,
  findSessions: () => Promise<void>,
): Promise<{ exact: number; problems: string[]; drainSeconds: number }> {
  const started = performance.now();
  type Row = { id: string; record_count: string; record_total: string | null; error_count: string; bytes: string };
  let rows: Row[] = [];
  const whole = (l: SimulatedLink, r: Row | undefined) =>
    r !== undefined && r.record_total !== null && r.record_count === r.record_total && Number(r.bytes) === l.sent;
  for (;;) {
    await findSessions();
    ({ rows } = await db.query<Row>(
      `select id, record_count::text, record_total::text, error_count::text,
              (link_bytes + link_lost_bytes)::text as bytes from sessions`,
    ));
    const byId = new Map(rows.map((r) => [r.id, r]));
    if (fleet.every((l) => l.session && whole(l, byId.get(l.session)))) break;
    if (performance.now() - started > drainSeconds * 1000) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const drainSeconds_ = (performance.now() - started) / 1000;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const problems: string[] = [];
  let exact = 0;
  for (const l of fleet) {
    const row = l.session ? byId.get(l.session) : undefined;
    if (!row) {
      problems.push(`${l.name}: no session stored`);
      continue;
    }
    if (!whole(l, row)) {
      problems.push(
        `${l.name}: not stored whole after ${drainSeconds} s (${row.record_count} of ${row.record_total ?? '?'} records, ${row.bytes} of ${l.sent} bytes)`,
      );
      continue;
    }
    const expected = offlineDecode(l);
    const stored = Number(row.record_count);
    // Seqs run 0..n-1 (the session's total is reached): the last seq is the count less one.
    if (stored !== expected.records || Number(row.error_count) !== expected.errors)
      problems.push(
        `${l.name}: ${stored} records (${row.error_count} errors) stored, the offline decode gives ${expected.records} (${expected.errors} errors)`,
      );
    else exact++;
  }
  return { exact, problems, drainSeconds: drainSeconds_ };
}

/** Each service's (and the servers') resident memory now, with the fleet's links connected and idle. */
async function idleMemory(services: readonly Service[]): Promise<void> {
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const now = residentMb(services);
  process.stdout.write(
    `RSS with ${links} idle links connected, after ${seconds} s: ${Object.entries(now)
      .map(([name, mb]) => `${name} ${mb.toFixed(1)} MB`)
      .join(', ')}\n`,
  );
  writeFigures('fleet-idle.json', services, {
    links,
    idle_seconds: seconds,
    rss_mb: Object.fromEntries(Object.entries(now).map(([k, v]) => [k, Number(v.toFixed(1))])),
  });
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
      startOffset: protocol === 'qs' ? Math.floor((i * source.length) / links) : 0,
      offset: protocol === 'qs' ? Math.floor((i * source.length) / links) : 0,
      sent: 0,
      ages: [],
      missed: 0,
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
      start('api', { ...env, API_PORT: String(await port()), API_AUTH: 'none' }),
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
        if (idle) {
          await idleMemory(services);
          return;
        }

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
        const findSessions = async () => {
          if (sessionOf.size === fleet.length) return;
          const { rows } = await db.query<{ id: string; rig: string }>('select id, rig from sessions');
          for (const r of rows) {
            const l = fleet.find((f) => f.name === r.rig);
            if (l && !l.session) {
              l.session = r.id;
              sessionOf.set(r.id, l);
            }
          }
        };
        const poll = async () => {
          await findSessions();
          const { rows } = await db.query<{ session: string; newest: string }>(
            'select session, max(max_host_ns)::text as newest from record_blocks where session = any($1) group by session',
            [[...sessionOf.keys()]],
          );
          const nowNs = BigInt(Date.now()) * 1_000_000n;
          for (const r of rows) sessionOf.get(r.session)?.ages.push(Number(nowNs - BigInt(r.newest)) / 1e6);
        };
        const half = t0 + (seconds * 1000) / 2;
        while (performance.now() - t0 < seconds * 1000) {
          const secondHalf = performance.now() >= half;
          await poll();
          // A link with nothing stored yet in the second half is as old as the run.
          if (secondHalf) for (const l of fleet) if (l.ages.length === 0) l.missed++;
          await new Promise((r) => setTimeout(r, 250));
        }
        clearInterval(pacing);
        pacing = undefined;
        const streamed = (performance.now() - t0) / 1000;
        const cpu = cpuUsed();
        const sentBytes = fleet.reduce((sum, l) => sum + l.sent, 0);

        // Latency over the second half of the run (the first fills caches and starts sessions).
        const perLink = fleet.map((l) => {
          const ages = secondHalfAges(l);
          return {
            link: l.name,
            protocol: l.protocol,
            baud: l.baud,
            stored: ages.length > 0,
            p50: ages.length > 0 ? percentile(ages, 50) : Number.POSITIVE_INFINITY,
            p99: ages.length > 0 ? percentile(ages, 99) : Number.POSITIVE_INFINITY,
          };
        });
        const noneStored = perLink.filter((l) => !l.stored);
        const p50s = perLink.map((l) => l.p50).sort((a, b) => a - b);
        const allAges = fleet.flatMap(secondHalfAges).sort((a, b) => a - b);
        // Links with nothing stored count as the oldest samples there can be.
        for (const l of fleet)
          if (secondHalfAges(l).length === 0) for (let i = 0; i < l.missed; i++) allAges.push(Number.POSITIVE_INFINITY);
        const median = percentile(p50s, 50);
        const slowest = perLink.reduce((a, b) => (b.p50 > a.p50 ? b : a));
        const { rows: stored } = await db.query<{ records: string; lost: string }>(
          'select coalesce(sum(record_count), 0)::text as records, coalesce(sum(link_lost_bytes), 0)::text as lost from sessions',
        );
        const coresUsed = Object.fromEntries(Object.entries(cpu.byProcess).map(([name, c]) => [name, c / streamed]));
        const busyCores = cpu.machineBusy / streamed;
        const offeredMb = offeredBytes / 1e6;
        const cpuPerMb = Object.fromEntries(Object.entries(coresUsed).map(([name, c]) => [name, c / offeredMb]));
        const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(0)} ms` : 'none stored');

        process.stdout.write(
          `sent ${(sentBytes / 1e6).toFixed(1)} MB in ${streamed.toFixed(1)} s (${(sentBytes / 1e6 / streamed).toFixed(2)} MB/s); ` +
            `${Number(stored[0].records)} records stored by the end, ${Number(stored[0].lost)} bytes dropped by the gateway\n`,
        );
        process.stdout.write(
          `ingest-to-query latency (age of each link's newest queryable record, second half): ` +
            `all links p50 ${ms(percentile(allAges, 50))}, p99 ${ms(percentile(allAges, 99))}; ` +
            `median link p50 ${ms(median)}; slowest link ${slowest.link} (${slowest.protocol}, ${slowest.baud} baud) ` +
            `p50 ${ms(slowest.p50)}${Number.isFinite(slowest.p50) ? ` = ${(slowest.p50 / median).toFixed(2)}× the median` : ''}\n`,
        );
        if (noneStored.length > 0)
          process.stdout.write(
            `behind: ${noneStored.length} links had no record stored in the second half (${noneStored
              .slice(0, 8)
              .map((l) => l.link)
              .join(', ')}${noneStored.length > 8 ? ', …' : ''})\n`,
          );
        process.stdout.write(
          `CPU (cores) while streaming: machine ${busyCores.toFixed(2)} of 2; ${Object.entries(coresUsed)
            .map(([name, c]) => `${name} ${c.toFixed(2)}`)
            .join(', ')}\n`,
        );
        process.stdout.write(
          `CPU seconds per MB offered: ${Object.entries(cpuPerMb)
            .map(([name, c]) => `${name} ${c.toFixed(3)}`)
            .join(', ')}; machine ${(busyCores / offeredMb).toFixed(3)}\n`,
        );

        // The targets go: every session ends. Each link's records, once stored whole, must be
        // those an offline decode of exactly its bytes gives.
        for (const l of fleet) l.socket?.end();
        const check = await checkEveryLink(fleet, db, findSessions);
        process.stdout.write(
          `stored against an offline decode of what each link sent: ${check.exact} of ${fleet.length} links exact` +
            `${check.problems.length > 0 ? `; ${check.problems.slice(0, 8).join('; ')}${check.problems.length > 8 ? '; …' : ''}` : ''}` +
            ` (drained ${check.drainSeconds.toFixed(1)} s after the run)\n`,
        );
        const finite = (v: number) => (Number.isFinite(v) ? Math.round(v) : null);
        const figures = {
          links,
          gateway_flush_ms: gatewayFlushMs ? Number(gatewayFlushMs) : null,
          seconds: Number(streamed.toFixed(1)),
          offered_bytes_per_s: offeredBytes,
          sent_bytes: sentBytes,
          records_stored: Number(stored[0].records),
          gateway_dropped_bytes: Number(stored[0].lost),
          latency_all_links_p50_ms: finite(percentile(allAges, 50)),
          latency_all_links_p99_ms: finite(percentile(allAges, 99)),
          latency_median_link_p50_ms: finite(median),
          links_with_no_record_stored: noneStored.map((l) => l.link),
          slowest_link: { ...slowest, p50: finite(slowest.p50), p99: finite(slowest.p99) },
          fairness_slowest_over_median: Number.isFinite(slowest.p50) ? Number((slowest.p50 / median).toFixed(2)) : null,
          per_link: perLink.map((l) => ({ ...l, p50: finite(l.p50), p99: finite(l.p99) })),
          cores_used: Object.fromEntries(Object.entries(coresUsed).map(([k, v]) => [k, Number(v.toFixed(3))])),
          cpu_seconds_per_mb_offered: Object.fromEntries(
            Object.entries(cpuPerMb).map(([k, v]) => [k, Number(v.toFixed(4))]),
          ),
          machine_busy_cores: Number(busyCores.toFixed(2)),
          machine_cpu_seconds_per_mb_offered: Number((busyCores / offeredMb).toFixed(4)),
          links_exact_after_drain: check.exact,
          link_problems: check.problems,
          drain_seconds: Number(check.drainSeconds.toFixed(1)),
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
