/**
 * The pipeline benchmark: every service as its own process (gateway on tcp-listen, decoder-qs,
 * storage, api) on real NATS and Postgres, fed by a TCP "target" streaming a real QS capture.
 *
 *   npm run bench -w tests            (needs `npm run build`, NATS_URL and DATABASE_URL)
 *
 * Prints: sustained records/s from the first byte sent to the last row committed, ingest-to-
 * queryable latency p50/p99 at a fixed offered rate, Postgres bytes per stored record (records
 * and the link's bytes), CPU per record of each process, and each service's peak RSS; writes
 * the same figures to test-output/bench/pipeline.json.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { connectBus } from '@tracehub/bus';
import { createDb, sessionRecordsPage } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { connectTargetOnceListening } from '../support/tcp-target.js';
import {
  benchRun,
  countCpu,
  cpuSeconds,
  freePort,
  natsUrl,
  percentile,
  shared,
  start,
  writeFigures,
} from './bench-support.js';

const offeredRate = Number(process.env.BENCH_LATENCY_RATE ?? 10_000);
const latencySeconds = Number(process.env.BENCH_LATENCY_SECONDS ?? 20);

async function main(): Promise<void> {
  const capture = gunzipSync(readFileSync(join(shared, 'bench/qs/big_stress.qs.gz')));
  // How many records the pipeline must store: an offline decode of the same bytes (+ the end).
  let expected = 0;
  const counter = new QsDecoder();
  counter.push(capture, { hostNs: 0n }, () => expected++);
  counter.end({ hostNs: 0n }, () => expected++);
  const bytesPerRecord = capture.length / expected;

  const port = await freePort();
  await benchRun(
    'bench',
    async (env) => [
      start('storage', env),
      start('decoder-qs', env),
      start('api', { ...env, API_PORT: String(await freePort()), API_AUTH: 'none' }),
      start('gateway', { ...env, TRACEHUB_LINKS: `qs/benchrig/uart0=tcp-listen:127.0.0.1:${port}` }),
    ],
    async ({ place, services, db }) => {
      const { dbUrl, prefix } = place;
      process.stdout.write(
        `pipeline bench: ${(capture.length / 1e6).toFixed(1)} MB QS capture, ${expected} records (${bytesPerRecord.toFixed(1)} B/record)\n`,
      );

      // 1. Throughput: stream the whole capture as fast as the gateway reads it.
      const cpuUsed = countCpu(services);
      const t0 = performance.now();
      const target = await connectTargetOnceListening(port);
      for (let at = 0; at < capture.length; at += 64 * 1024) {
        if (!target.write(capture.subarray(at, at + 64 * 1024))) await new Promise((r) => target.once('drain', r));
      }
      await new Promise<void>((r) => target.end(() => r()));
      const sent = performance.now();
      let stored = 0;
      let session = '';
      let decodedAt = 0;
      const bus = await connectBus({ url: natsUrl, name: 'bench-watch', prefix });
      const { Kvm } = await import('@nats-io/kv');
      const checkpoints = await new Kvm(bus.js).open(bus.names.decoderStateBucket);
      for (;;) {
        if (!decodedAt) {
          const cp = (await checkpoints.get('qs.benchrig.uart0'))?.json<{ ended: boolean }>();
          if (cp?.ended) decodedAt = performance.now();
        }
        const { rows } = await db.query(
          `select id, record_count::int as n, ended_at is not null as ended from sessions where link = 'uart0' order by started_at desc limit 1`,
        );
        if (rows[0]) {
          session = rows[0].id;
          stored = rows[0].n;
          if (rows[0].ended && stored >= expected) break;
        }
        if (performance.now() - t0 > 15 * 60_000)
          throw new Error(`only ${stored} of ${expected} records stored after 15 min`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - t0) / 1000;
      const cpu = cpuUsed();
      await bus.close();
      process.stdout.write(
        `decoded (every record on TRACE_REC) after ${((decodedAt - t0) / 1000).toFixed(1)} s = ${Math.round(expected / ((decodedAt - t0) / 1000))} records/s; ` +
          `CPU seconds so far: ${services.map((s) => `${s.name} ${cpuSeconds(s.child.pid!).toFixed(1)}`).join(', ')}\n`,
      );
      process.stdout.write(
        `sustained: ${stored} records in ${seconds.toFixed(1)} s = ${Math.round(stored / seconds)} records/s, ` +
          `${(capture.length / 1e6 / seconds).toFixed(1)} MB/s (bytes sent in ${((sent - t0) / 1000).toFixed(1)} s)\n`,
      );
      const busy = cpu.machineBusy;
      const decodeStage = Math.round(expected / ((decodedAt - t0) / 1000));
      const cpuPerRecordUs = Object.fromEntries(
        Object.entries(cpu.byProcess).map(([name, seconds]) => [name, (seconds / stored) * 1e6]),
      );
      process.stdout.write(
        `CPU per record: ${Object.entries(cpuPerRecordUs)
          .map(([name, us]) => `${name} ${us.toFixed(2)} µs`)
          .join(', ')}\n`,
      );
      // Postgres bytes per record: every relation of the record blocks and the link's bytes (heap,
      // indexes, TOAST), once the session's link bytes are all stored too and storage has merged
      // the small blocks of its last batches (as it does every few seconds for settled blocks).
      for (let i = 0; i < 600; i++) {
        const { rows } = await db.query(
          'select count(*)::int as n from record_blocks where session = $1 and record_count < 1000',
          [session],
        );
        if (rows[0].n <= 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let i = 0; i < 600; i++) {
        const { rows } = await db.query(
          `select coalesce((select s.link_chunks = b.last_chunk + 1 from sessions s join link_chunks b on b.session = s.id and b.eos where s.id = $1 limit 1), false) as done`,
          [session],
        );
        if (rows[0]?.done) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const { rows: sizes } = await db.query(`
      select p.relname as parent, sum(pg_total_relation_size(c.oid))::bigint::text as bytes
      from pg_inherits i join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
      where p.relname in ('record_blocks', 'link_chunks') group by p.relname
      union all
      select relname, pg_total_relation_size(oid)::bigint::text from pg_class where relname in ('sessions', 'dictionaries') and relkind = 'r'`);
      const disk = Object.fromEntries(sizes.map((r) => [r.parent as string, Number(r.bytes)]));
      const diskTotal = Object.values(disk).reduce((a, b) => a + b, 0);
      process.stdout.write(
        `Postgres bytes per record: ${(diskTotal / stored).toFixed(2)} (${Object.entries(disk)
          .map(([name, bytes]) => `${name} ${(bytes / stored).toFixed(2)}`)
          .join(', ')})\n`,
      );
      process.stdout.write(
        `CPU while sustaining: machine ${busy.toFixed(1)} of ${cpu.machineTotal.toFixed(1)} core-seconds busy` +
          ` (${((busy / stored) * 1e6).toFixed(1)} µs a record); ` +
          Object.entries(cpu.byProcess)
            .map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s`)
            .join(', ') +
          ' (local server processes; other work on the machine included)\n',
      );

      // 2. Latency at a fixed offered rate: gateway receive time (host_ns) to the row being visible.
      const rateBytes = offeredRate * bytesPerRecord;
      const slice = capture.subarray(0, Math.min(capture.length, Math.round(rateBytes * latencySeconds)));
      const target2 = await connectTargetOnceListening(port);
      await new Promise((r) => setTimeout(r, 300));
      const { rows: latest } = await db.query(
        `select id from sessions where link = 'uart0' order by started_at desc limit 1`,
      );
      const latencies: number[] = [];
      const reader = createDb(dbUrl, { maxConnections: 2, applicationName: 'bench-reader' });
      let lastSeq = -1;
      let polling = true;
      let session2 = latest[0]?.id === session ? '' : (latest[0]?.id ?? '');
      const poller = (async () => {
        while (polling) {
          if (!session2) {
            const { rows } = await db.query(
              `select id from sessions where link = 'uart0' and id <> $1 order by started_at desc limit 1`,
              [session],
            );
            session2 = rows[0]?.id ?? '';
          } else {
            // Read as a query reads them: the session's blocks, decoded.
            const rows = await sessionRecordsPage(reader, session2, lastSeq, 1_000_000);
            const nowNs = BigInt(Date.now()) * 1_000_000n;
            for (const r of rows) {
              latencies.push(Number(nowNs - r.host_ns) / 1e6);
              lastSeq = Number(r.seq);
            }
          }
          await new Promise((r) => setTimeout(r, 10));
        }
      })();
      const started = performance.now();
      const step = Math.max(1, Math.round(rateBytes / 100)); // 100 writes a second
      for (let at = 0; at < slice.length; at += step) {
        target2.write(slice.subarray(at, at + step));
        const due = started + ((at + step) / rateBytes) * 1000;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      await new Promise<void>((r) => target2.end(() => r()));
      await new Promise((r) => setTimeout(r, 3000));
      polling = false;
      await poller;
      await reader.destroy();
      latencies.sort((a, b) => a - b);
      process.stdout.write(
        `latency at ${offeredRate} records/s offered (${latencies.length} records): ` +
          `p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies.at(-1)?.toFixed(0)} ms\n`,
      );
      const figures = {
        sustained_records_per_s: Math.round(stored / seconds),
        decode_stage_records_per_s: decodeStage,
        latency_p50_ms: Math.round(percentile(latencies, 50)),
        latency_p99_ms: Math.round(percentile(latencies, 99)),
        offered_records_per_s: offeredRate,
        bytes_on_disk_per_record: Number((diskTotal / stored).toFixed(1)),
        bytes_on_disk_by_table_per_record: Object.fromEntries(
          Object.entries(disk).map(([name, bytes]) => [name, Number((bytes / stored).toFixed(1))]),
        ),
        cpu_us_per_record: Object.fromEntries(
          Object.entries(cpuPerRecordUs).map(([k, v]) => [k, Number(v.toFixed(2))]),
        ),
        records: stored,
      };
      writeFigures('pipeline.json', services, figures);
    },
  );
}

main().catch((err) => {
  process.stderr.write(`pipeline bench failed: ${err instanceof Error ? err.message : `${err}`}\n`);
  process.exit(1);
});
