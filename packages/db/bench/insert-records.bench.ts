/**
 * Records per second of `insertRecordsJson`: 10 000-record batches given as JSON bytes, parsed
 * and stored in record blocks as `storeRecords` stores them, into a fresh database.
 * `npm run bench -w @tracehub/db` (DATABASE_URL points at any database of the server; the
 * benchmark creates and drops its own).
 */
import { randomBytes } from 'node:crypto';
import type { TraceRecord } from '@tracehub/contracts';
import pg from 'pg';
import { createDb, insertRecordsJson, migrateToLatest } from '../src/index.js';

const BATCH = 10_000;
const BATCHES = Number(process.env.BENCH_BATCHES ?? 20);
const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function record(session: string, seq: number, hostNs: bigint): TraceRecord {
  return {
    rig: 'rig7',
    link: 'uart0',
    session,
    seq,
    chunk: seq >> 6,
    protocol: 'qs',
    hostNs: hostNs.toString(),
    targetTs: (1_000_000 + seq * 37).toString(),
    kind: 'record',
    type: 6,
    name: 'QS_QEP_STATE_ENTRY',
    qs: { obj: 'l_philo[2]', sig: 'TIMEOUT_SIG', prio: 3 },
    fields: { obj: 'l_philo[2]', state: 'Philo_thinking', tstamp: 1_000_000 + seq * 37 },
    text: `${(1_000_000 + seq * 37).toString().padStart(10, '0')} ===>St-Entry Obj=l_philo[2],State=Philo_thinking #${seq}`,
    raw: 'BgAAAAEAAgMEBQYHCAkKCwwNDg8=',
  };
}

async function main(): Promise<void> {
  const name = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const db = createDb(url.toString());
  try {
    await migrateToLatest(db);
    const base = BigInt(Date.now()) * 1_000_000n;
    let next = 0;
    const makeBatch = () =>
      Buffer.from(
        JSON.stringify(
          Array.from({ length: BATCH }, () => {
            const seq = next++;
            return record('bench', seq, base + BigInt(seq) * 10_000n);
          }),
        ),
      );
    await insertRecordsJson(db, makeBatch()); // warm the connection and the plan

    const run = async (label: string) => {
      const batches = Array.from({ length: BATCHES }, makeBatch);
      const times: number[] = [];
      for (const batch of batches) {
        const t0 = process.hrtime.bigint();
        await insertRecordsJson(db, batch);
        times.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      const total = times.reduce((a, b) => a + b, 0);
      times.sort((a, b) => a - b);
      const t0 = process.hrtime.bigint();
      await insertRecordsJson(db, batches[0]);
      const replayMs = Number(process.hrtime.bigint() - t0) / 1e6;
      console.log(`${label}: ${BATCHES} batches of ${BATCH} records`);
      console.log(`  new rows:   ${Math.round((BATCH * BATCHES) / (total / 1000))} rows/s`);
      console.log(`  per batch:  median ${times[times.length >> 1].toFixed(0)} ms, max ${times.at(-1)?.toFixed(0)} ms`);
      console.log(`  re-sent batch (all duplicates): ${Math.round(BATCH / (replayMs / 1000))} rows/s`);
    };
    await run('insertRecordsJson into record blocks (the default schema)');
  } finally {
    await db.destroy();
    await admin.query(`drop database ${name} with (force)`);
    await admin.end();
  }
}

await main();
