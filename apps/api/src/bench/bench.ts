// Benchmark (run by hand: `npm run bench -w apps/api` after a build): fills a fresh database with
// BENCH_RECORDS records (default 10 million) by generate_series SQL, then measures the latency of a
// time-range records query through the api and the throughput of the SSE live tail to 50 clients.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectBus } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import { createDb, ensurePartitions, migrateToLatest, type SessionRecords, storeRecords } from '@tracehub/db';
import { sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../app.js';
import { parseApiTokens } from '../config.js';
import { SseEventReader } from '../live/sse.js';

const TOTAL = Number(process.env.BENCH_RECORDS ?? 10_000_000);
const SERVER = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const NATS = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const RIGS = 20;
const LINKS = 4;
const DAYS = 7;
const START = Date.UTC(2025, 10, 1);
const TOKEN = 'bench-token-0123456789';

/** A QS-like record of session k (rig k % RIGS, link k / RIGS % LINKS). */
function benchRecord(k: number, seq: number, hostNs: bigint): TraceRecord {
  const philo = seq % 5;
  const name = seq % 7 === 0 ? 'PHILO_STAT' : 'QS_QEP_TRAN';
  return {
    rig: `rig${k % RIGS}`,
    link: `uart${Math.floor(k / RIGS) % LINKS}`,
    session: `s-${k}`,
    seq,
    chunk: Math.floor(seq / 20),
    protocol: 'qs',
    hostNs: hostNs.toString(),
    targetTs: String(seq * 37),
    kind: seq % 1000 === 0 ? 'error' : 'record',
    type: 6,
    name,
    qs: { obj: `Philo_inst[${philo}]`, sig: 'TIMEOUT_SIG', prio: philo + 1 },
    fields: { obj: `Philo_inst[${philo}]`, sig: 'TIMEOUT_SIG', source: 'Philo_thinking', target: 'Philo_hungry' },
    text: `${String(seq * 37).padStart(10, '0')} ===>Tran Obj=Philo_inst[${philo}],Sig=TIMEOUT_SIG,State=Philo_thinking->Philo_hungry`,
    raw: Buffer.from([1, 6, seq & 0xff, (seq >> 8) & 0xff]).toString('base64'),
  };
}

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
    // Records spread evenly over DAYS days, round-robin over RIGS x LINKS links, one session per
    // link, stored as storage stores them: blocks of consecutive records of a session.
    const spanNs = BigInt(DAYS) * 86_400_000_000_000n;
    const sessions = RIGS * LINKS;
    const perSession = Math.ceil(TOTAL / sessions);
    const t0 = performance.now();
    const BLOCK = 2000;
    let stored = 0;
    for (let first = 0; first < perSession; first += BLOCK) {
      const batch: SessionRecords[] = [];
      for (let k = 0; k < sessions; k++) {
        const records: TraceRecord[] = [];
        for (let seq = first; seq < Math.min(perSession, first + BLOCK); seq++) {
          const i = seq * sessions + k; // the record's place in the fleet's time order
          if (i >= TOTAL) break;
          records.push(benchRecord(k, seq, BigInt(START) * 1_000_000n + (BigInt(i) * spanNs) / BigInt(TOTAL)));
        }
        if (records.length > 0) batch.push({ session: `s-${k}`, records });
      }
      stored += (await storeRecords(db, batch)).inserted;
      process.stdout.write(`\rfilled ${stored} of ${TOTAL} records`);
    }
    await sql`analyze record_blocks`.execute(db);
    const fillS = (performance.now() - t0) / 1000;
    const { rows: size } = await sql<{ bytes: string }>`
      select sum(pg_total_relation_size(c.oid))::text as bytes from pg_inherits i
      join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent where p.relname = 'record_blocks'`.execute(
      db,
    );
    console.log(
      `\nfill: ${stored} records in ${fillS.toFixed(1)} s (${Math.round(stored / fillS)} records/s, storeRecords), ` +
        `${(Number(size[0].bytes) / stored).toFixed(1)} B/record in record_blocks`,
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
        scanLimitBytes: 2_000_000_000,
      },
    });

    // Time-range query: one link, a random 10-minute window, newest first, 100 a page; the first
    // 30 warm the process (JIT, the pool's connections) and are not counted.
    const latencies: number[] = [];
    for (let i = -30; i < 300; i++) {
      const from = START + Math.floor(Math.random() * (DAYS * 86_400_000 - 600_000));
      const q = `rig=rig${i % RIGS}&link=uart${i % LINKS}&from=${new Date(from).toISOString()}&to=${new Date(from + 600_000).toISOString()}&limit=100`;
      const t = performance.now();
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/records?${q}`,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      if (i >= 0) latencies.push(performance.now() - t);
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    console.log(
      `time-range query (1 link, 10 min, 100 rows): p50 ${pct(latencies, 0.5).toFixed(1)} ms, p99 ${pct(latencies, 0.99).toFixed(1)} ms`,
    );

    // Text search over one link-day: a text no record holds, so every block of the day is read.
    for (const text of ['no-such-text', 'Philo_inst[3],Sig=TIMEOUT_SIG']) {
      const day = new Date(START + 2 * 86_400_000).toISOString();
      const next = new Date(START + 3 * 86_400_000).toISOString();
      const t = performance.now();
      const res = await app.inject({
        method: 'GET',
        url: `/api/v1/records?rig=rig3&link=uart3&from=${day}&to=${next}&text=${encodeURIComponent(text)}&limit=100`,
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      const ms = performance.now() - t;
      if (res.statusCode !== 200) throw new Error(res.body);
      const scanned = Number(res.headers['x-tracehub-scanned-bytes']);
      console.log(
        `text search "${text}" over one link-day: ${ms.toFixed(0)} ms, ${(scanned / 1e6).toFixed(1)} MB of records scanned ` +
          `(${(ms / (scanned / 1e9)).toFixed(0)} ms per GB), ${JSON.parse(res.body).records.length} rows`,
      );
    }

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
              const events = new SseEventReader();
              res.on('data', (text: string) => {
                for (const { event, data } of events.push(text)) {
                  if (event !== 'records') continue;
                  counts[c] += JSON.parse(data).length;
                  if (counts[c] === want && ++done === CLIENTS) resolveAll();
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
