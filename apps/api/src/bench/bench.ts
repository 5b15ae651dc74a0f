// Benchmark (run by hand: `npm run bench -w apps/api` after a build): fills a fresh database with
// BENCH_RECORDS records (default 10 million) by generate_series SQL, then measures the latency of a
// time-range records query through the api and the throughput of the SSE live tail to 50 clients.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectBus } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { createDb, ensurePartitions, migrateToLatest } from '@tracehub/db';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../app.js';
import { parseApiTokens } from '../config.js';

const TOTAL = Number(process.env.BENCH_RECORDS ?? 10_000_000);
const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const RIGS = 20;
const LINKS = 4;
const DAYS = 7;
const START = Date.UTC(2025, 10, 1);
const TOKEN = 'bench-token-0123456789';

const pct = (xs: number[], p: number) =>
  xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function main() {
  const name = `tracehub_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: SERVER });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  const url = new URL(SERVER);
  url.pathname = `/${name}`;
  const db = createDb(url.toString());
  try {
    await migrateToLatest(db);
    await ensurePartitions(db, { from: new Date(START), daysAhead: DAYS });
    // Records spread evenly over DAYS days, round-robin over RIGS x LINKS links, one session per link.
    const spanUs = DAYS * 86_400_000_000;
    const t0 = performance.now();
    // A GIN trigram index grows slowly row by row; building it once after the load is far faster.
    await sql`drop index if exists records_text_trgm_idx`.execute(db);
    const step = 1_000_000;
    for (let from = 0; from < TOTAL; from += step) {
      const to = Math.min(TOTAL, from + step) - 1;
      await sql`
        insert into records (session, seq, host_time, host_ns, rig, link, protocol, chunk, target_ts, kind, type, name,
                             qs_obj, qs_sig, qs_prio, fields, text, raw)
        select 's-' || (i % ${RIGS * LINKS}), i / ${RIGS * LINKS},
               timestamptz 'epoch' + (${START * 1000}::bigint + i * (${spanUs}::bigint / ${TOTAL})) * interval '1 microsecond',
               (${START * 1000}::bigint + i * (${spanUs}::bigint / ${TOTAL})) * 1000,
               'rig' || (i % ${RIGS}), 'uart' || (i / ${RIGS} % ${LINKS}), 'qs', i / 20, (i * 37)::numeric,
               case when i % 1000 = 0 then 'error' else 'record' end, 6,
               case when i % 7 = 0 then 'PHILO_STAT' else 'QS_QEP_TRAN' end,
               'Philo_inst[' || (i % 5) || ']', 'TIMEOUT_SIG', i % 5 + 1, '{}'::jsonb,
               lpad((i * 37)::text, 10, '0') || ' ===>Tran Obj=Philo_inst[' || (i % 5) || '],Sig=TIMEOUT_SIG,State=Philo_thinking->Philo_hungry',
               '\\x0106'::bytea
        from generate_series(${from}::bigint, ${to}::bigint) as i`.execute(db);
      process.stdout.write(`\rfilled ${to + 1} of ${TOTAL} records`);
    }
    await sql`create index if not exists records_text_trgm_idx on records using gin (text gin_trgm_ops)`.execute(db);
    await sql`analyze records`.execute(db);
    const fillS = (performance.now() - t0) / 1000;
    console.log(
      `\nfill: ${TOTAL} records in ${fillS.toFixed(1)} s (${Math.round(TOTAL / fillS)} records/s, generate_series SQL)`,
    );

    const bus = await connectBus({ url: NATS, name: 'api-bench', prefix: `bench${Date.now()}` });
    const app = await buildApp({
      db,
      bus,
      settings: {
        tokens: parseApiTokens(`${TOKEN}:read`),
        corsOrigins: [],
        maxPageSize: 1000,
        bodyLimit: 65536,
        liveQueueRecords: 50_000,
        controlTimeoutMs: 1000,
        statementTimeoutMs: 20_000,
        heavyQueries: 4,
      },
    });

    // Time-range query: one link, a random 10-minute window, newest first, 100 a page.
    const latencies: number[] = [];
    for (let i = 0; i < 300; i++) {
      const from = START + Math.floor(Math.random() * (DAYS * 86_400_000 - 600_000));
      const q = `rig=rig${i % RIGS}&link=uart${i % LINKS}&from=${new Date(from).toISOString()}&to=${new Date(from + 600_000).toISOString()}&limit=100`;
      const t = performance.now();
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/records?${q}`,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      latencies.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    console.log(
      `time-range query (1 link, 10 min, 100 rows): p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms`,
    );

    // SSE fan-out: 50 clients, every record to every client.
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const CLIENTS = 50;
    const BATCHES = 200;
    const PER = 100;
    const want = BATCHES * PER;
    const counts = new Array<number>(CLIENTS).fill(0);
    const reqs: http.ClientRequest[] = [];
    let resolveAll!: () => void;
    const allDone = new Promise<void>((r) => (resolveAll = r));
    let done = 0;
    await Promise.all(
      counts.map(
        (_, c) =>
          new Promise<void>((ready) => {
            const req = http.get(`http://127.0.0.1:${port}/api/v1/live/sse?access_token=${TOKEN}`, (res) => {
              res.setEncoding('utf8');
              let buf = '';
              res.on('data', (text: string) => {
                buf += text;
                let end = buf.indexOf('\n\n');
                while (end >= 0) {
                  const block = buf.slice(0, end);
                  buf = buf.slice(end + 2);
                  if (block.startsWith('event: records')) {
                    counts[c] += JSON.parse(block.slice(block.indexOf('data: ') + 6)).length;
                    if (counts[c] === want && ++done === CLIENTS) resolveAll();
                  }
                  end = buf.indexOf('\n\n');
                }
              });
              ready();
            });
            reqs.push(req);
          }),
      ),
    );
    while (app.liveHub.clientCount < CLIENTS) await new Promise((r) => setTimeout(r, 10));
    const record = (seq: number): TraceRecord => ({
      rig: 'rig1',
      link: 'uart0',
      session: 'fan',
      seq,
      chunk: seq,
      protocol: 'qs',
      hostNs: String(BigInt(Date.now()) * 1_000_000n),
      targetTs: String(seq),
      kind: 'record',
      type: 6,
      name: 'QS_QEP_TRAN',
      qs: { obj: 'Philo_inst[1]', sig: 'TIMEOUT_SIG' },
      fields: {},
      text: `${seq} ===>Tran Obj=Philo_inst[1],Sig=TIMEOUT_SIG,State=Philo_thinking->Philo_hungry`,
      raw: 'AQY=',
    });
    const t1 = performance.now();
    for (let b = 0; b < BATCHES; b++) {
      const records = Array.from({ length: PER }, (_, i) => record(b * PER + i));
      const batch: RecordBatch = {
        protocol: 'qs',
        rig: 'rig1',
        link: 'uart0',
        session: 'fan',
        chunk: b,
        hostNs: records[0].hostNs,
        eos: false,
        records,
      };
      bus.nc.publish(bus.names.recSubject('qs', 'rig1', 'uart0'), JSON.stringify(batch));
      if (b % 10 === 9) await bus.nc.flush();
    }
    await Promise.race([allDone, new Promise((r) => setTimeout(r, 60_000))]);
    const s = (performance.now() - t1) / 1000;
    const delivered = counts.reduce((a, b) => a + b, 0);
    const missed = want * CLIENTS - delivered;
    console.log(
      `SSE fan-out: ${want} records to each of ${CLIENTS} clients in ${s.toFixed(2)} s: ${Math.round(delivered / s)} record deliveries/s (${Math.round(want / s)} records/s per client), ${missed} missed`,
    );
    for (const r of reqs) r.destroy();
    await app.close();
    await bus.close();
  } finally {
    await db.destroy();
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }
}

await main();
