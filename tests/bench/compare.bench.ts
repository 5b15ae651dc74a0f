/**
 * Two runs compared at `big_stress` size: bench/qs/big_stress.qs.gz decoded (as the pipeline's
 * decoder does) and stored as one session, its record blocks stored again as a second session,
 * then `GET /api/v1/compare` of the two, timed (both sessions read whole: the sequences agree
 * to the end, the slowest case): three times from the blocks' digests, then once with the
 * digests removed, as blocks written before they were kept are read (every record decoded).
 *
 *   npm run bench:compare -w tests      (needs `npm run build` and DATABASE_URL)
 *
 * Writes test-output/bench/compare.json.
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { buildApp } from '@tracehub/api';
import { connectBus } from '@tracehub/bus';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { createDb, migrateToLatest } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { sql } from 'kysely';
import { READ_TOKEN, testApiSettings } from '../api/fixture-data.js';
import { freshDatabase, natsUrl, sharedDir, uniquePrefix } from '../support/index.js';
import { storeRecordBatches, storeSessionStart } from '../support/stored-session.js';
import { writeFigures } from './bench-support.js';

const fresh = await freshDatabase('comparebench');
const db = createDb(fresh.url);
const bus = await connectBus({ url: natsUrl(), name: 'compare-bench', prefix: uniquePrefix('cmpb') });
try {
  await migrateToLatest(db);
  const bytes = gunzipSync(readFileSync(join(sharedDir, 'bench', 'qs', 'big_stress.qs.gz')));
  const place = { rig: 'rigA', link: 'uart0', session: 'big-a', startNs: BigInt(Date.now() - 3_600_000) * 1_000_000n };
  const decoder = new QsDecoder();
  let records: TraceRecord[] = [];
  let stored = 0;
  let chunk = 0;
  const hostNs = () => place.startNs + BigInt(chunk) * 1_000_000n;
  const emit = (r: DecodedRecord) =>
    records.push(toTraceRecord(r, { ...place, seq: stored + records.length, chunk, protocol: 'qs', hostNs: hostNs() }));
  await storeSessionStart(db, place, 'qs');
  const fillStart = performance.now();
  for (let off = 0; off < bytes.length; off += 4096, chunk++) {
    decoder.push(bytes.subarray(off, off + 4096), { hostNs: hostNs() }, emit);
    if (records.length >= 20_000) {
      await storeRecordBatches(db, records, 5000);
      stored += records.length;
      records = [];
    }
  }
  decoder.end({ hostNs: hostNs() }, emit);
  await storeRecordBatches(db, records, 5000);
  stored += records.length;
  const fillSeconds = (performance.now() - fillStart) / 1000;
  // The second run: the same blocks under another session id.
  await sql`insert into sessions (id, rig, link, protocol, started_at) select 'big-b', 'rigB', link, protocol, started_at from sessions where id = 'big-a'`.execute(
    db,
  );
  await sql`insert into record_blocks (session, first_seq, last_seq, host_time, min_host_ns, max_host_ns, rig, link, protocol, record_count, min_target_ts, max_target_ts, first_chunk, last_chunk, error_count, gap_count, lost_bytes, states, digest, codec, byte_count, data, names, kinds, types, objs, sigs, prios, channels)
    select 'big-b', first_seq, last_seq, host_time, min_host_ns, max_host_ns, 'rigB', link, protocol, record_count, min_target_ts, max_target_ts, first_chunk, last_chunk, error_count, gap_count, lost_bytes, states, digest, codec, byte_count, data, names, kinds, types, objs, sigs, prios, channels
    from record_blocks where session = 'big-a'`.execute(db);
  const app = await buildApp({ db, bus, settings: testApiSettings({ scanLimitBytes: 20_000_000_000 }) });
  /** Wall and CPU seconds of `runs` comparisons of the two sessions, and the last answer. */
  const timeComparisons = async (runs: number) => {
    const wall: number[] = [];
    const cpu: number[] = [];
    let reply: { recordsA: number; recordsB: number; counts: unknown[]; divergence: unknown } | undefined;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      const before = process.cpuUsage();
      const res = await app.inject({
        url: '/api/v1/compare?a=big-a&b=big-b',
        headers: { authorization: `Bearer ${READ_TOKEN}` },
      });
      wall.push(Number(((performance.now() - t) / 1000).toFixed(2)));
      const used = process.cpuUsage(before);
      cpu.push(Number(((used.user + used.system) / 1e6).toFixed(2)));
      if (res.statusCode !== 200) throw new Error(`compare answered ${res.statusCode}: ${res.body}`);
      reply = res.json();
    }
    return { wall, cpu, reply };
  };
  const withDigests = await timeComparisons(3);
  // Blocks written before blocks kept a digest: every record decoded (once, it takes long).
  await sql`update record_blocks set digest = null where session in ('big-a', 'big-b')`.execute(db);
  const withoutDigests = await timeComparisons(1);
  await app.close();
  const figures = {
    records: stored,
    fillSeconds: Number(fillSeconds.toFixed(1)),
    /** Wall seconds, and CPU seconds of this process (the api's: what a shared machine's load changes least). */
    compareSeconds: withDigests.wall,
    compareCpuSeconds: withDigests.cpu,
    withoutDigestsSeconds: withoutDigests.wall,
    withoutDigestsCpuSeconds: withoutDigests.cpu,
    load: loadavg().map((l) => Number(l.toFixed(2))),
    counts: withDigests.reply?.counts.length,
    divergence: withDigests.reply?.divergence,
    sameAnswerWithoutDigests: JSON.stringify(withDigests.reply) === JSON.stringify(withoutDigests.reply),
  };
  console.log(JSON.stringify(figures, null, 2));
  writeFigures('compare.json', [], figures);
} finally {
  await bus.close();
  await db.destroy();
  await fresh.drop();
}
