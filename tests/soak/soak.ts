/**
 * The soak: every service as its own process for a long run, as a lab runs them. Three QS links
 * stream a real capture at a steady rate into a gateway; a PalmTrace client and an SSE client
 * that never read sit beside a PalmTrace client and an SSE client that read everything; a
 * control command goes out every second. Every minute it prints each service's RSS; at the end
 * it says whether memory stayed flat and whether the readers that read lost anything.
 *
 *   npm run soak      (needs `npm run build`, NATS_URL and DATABASE_URL; not part of CI)
 *
 * SOAK_MINUTES (30), SOAK_RATE (records/s per link, 500). Exit 1 when a record was lost,
 * a reading client missed one, or a service's RSS grew by more than a quarter.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { type PalmTraceMessage, PalmTraceParser } from '@tracehub/palmtrace';
import { QsDecoder } from '@tracehub/qs';
import { freePort } from '@tracehub/tests/support';
import pg from 'pg';
import { freshBenchPlace, natsUrl, serviceEnv, shared } from '../bench/bench-support.js';
import { type RunningProcess, removeBusPrefix, startNode } from '../foundation/processes.js';
import { connectTargetOnceListening } from '../support/tcp-target.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const ratePerLink = Number(process.env.SOAK_RATE ?? 500);
const LINKS = ['uart0', 'uart1', 'uart2'];
const TOKEN = `soak-${randomBytes(12).toString('hex')}`;
const SAMPLE_MS = 10_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** V8 heap in use, MB, from a service's /metrics (what RSS alone cannot tell: garbage not yet returned). */
async function heapUsedMb(healthPort: number): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  return Number(/^\w*nodejs_heap_size_used_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1] ?? Number.NaN) / 1048576;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** A QS target: the capture, over and over, at `bytesPerSecond`, in 100 ms slices. */
function streamTarget(port: number, capture: Buffer, bytesPerSecond: number): { stop: () => Promise<number> } {
  let stopping = false;
  let sent = 0;
  const done = (async () => {
    const socket = await connectTargetOnceListening(port, 200);
    const slice = Math.max(1, Math.round(bytesPerSecond / 10));
    let at = 0;
    const t0 = performance.now();
    while (!stopping) {
      const due = Math.floor(((performance.now() - t0) / 1000) * bytesPerSecond);
      while (sent < due) {
        const n = Math.min(slice, due - sent, capture.length - at);
        if (!socket.write(capture.subarray(at, at + n))) await new Promise((r) => socket.once('drain', r));
        sent += n;
        at = (at + n) % capture.length;
      }
      await sleep(100);
    }
    await new Promise<void>((r) => socket.end(() => r()));
    return sent;
  })();
  return {
    stop: async () => {
      stopping = true;
      return done;
    },
  };
}

/** An SSE client: reading counts every record and every "missed" notice; stalled never reads. */
function sseClient(port: number, reads: boolean): { records: number; missed: number; close: () => void } {
  const state = { records: 0, missed: 0, close: () => {} };
  const req = http.get({ host: '127.0.0.1', port, path: `/api/v1/live/sse?rig=soak&access_token=${TOKEN}` }, (res) => {
    if (!reads) {
      res.pause();
      return;
    }
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (text: string) => {
      buffer += text;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(event)?.[1];
        const data = /^data: (.*)$/m.exec(event)?.[1];
        if (!data) continue;
        if (name === 'records') state.records += (JSON.parse(data) as unknown[]).length;
        if (name === 'missed') state.missed += (JSON.parse(data) as { missed: number }).missed;
      }
    });
  });
  req.on('error', () => {});
  state.close = () => req.destroy();
  return state;
}

/** A PalmTrace client of the listening port: reading counts messages; stalled never reads. */
async function palmClient(port: number, reads: boolean): Promise<{ messages: number; close: () => void }> {
  const socket = await connectTargetOnceListening(port, 200);
  socket.on('error', () => {});
  const state = { messages: 0, close: () => socket.destroy() };
  if (!reads) {
    socket.pause();
    return state;
  }
  const parser = new PalmTraceParser();
  socket.on('data', (chunk) =>
    parser.push(chunk, (e: { type: string; message?: PalmTraceMessage }) => {
      if (e.type === 'message') state.messages++;
    }),
  );
  return state;
}

async function main(): Promise<void> {
  const capture = gunzipSync(readFileSync(join(shared, 'bench/qs/big_stress.qs.gz')));
  let perCapture = 0;
  const counter = new QsDecoder();
  counter.push(capture, { hostNs: 0n }, () => perCapture++);
  const bytesPerRecord = capture.length / perCapture;

  const place = await freshBenchPlace('soak');
  const ports = { api: await freePort(), palm: await freePort(), links: [] as number[] };
  for (const _ of LINKS) ports.links.push(await freePort());
  const env = serviceEnv(place);
  const names = ['gateway', 'decoder-qs', 'storage', 'api'] as const;
  const services = new Map<string, RunningProcess>();
  const db = new pg.Client({ connectionString: place.dbUrl });
  const closers: Array<() => void> = [];
  let failed = false;
  try {
    for (const name of names) {
      const extra: Record<string, string> =
        name === 'gateway'
          ? { TRACEHUB_LINKS: LINKS.map((l, i) => `qs/soak/${l}=tcp-listen:127.0.0.1:${ports.links[i]}`).join(';') }
          : name === 'api'
            ? {
                API_PORT: String(ports.api),
                API_HOST: '127.0.0.1',
                API_TOKENS: `${TOKEN}:read+control`,
                PALMTRACE_LISTEN_PORT: String(ports.palm),
              }
            : {};
      services.set(name, startNode(`apps/${name}/dist/main.js`, { ...env, ...extra }));
    }
    const healthPorts = new Map<string, number>();
    await Promise.all(
      [...services].map(async ([name, s]) =>
        healthPorts.set(name, JSON.parse(await s.waitForLine(/"msg":"ready/, 60_000)).healthPort),
      ),
    );
    await db.connect();
    process.stdout.write(
      `soak: ${minutes} min, 3 QS links at ${ratePerLink} records/s each (${((ratePerLink * bytesPerRecord) / 1024).toFixed(1)} KiB/s each, big_stress looped)\n`,
    );

    const sseReader = sseClient(ports.api, true);
    const sseStalled = sseClient(ports.api, false);
    const palmReader = await palmClient(ports.palm, true);
    const palmStalled = await palmClient(ports.palm, false);
    closers.push(sseReader.close, sseStalled.close, palmReader.close, palmStalled.close);
    await sleep(1000);

    const targets = ports.links.map((p) => streamTarget(p, capture, ratePerLink * bytesPerRecord));
    const control = { sent: 0, answered: 0, statuses: new Map<number, number>() };
    const linkIds: number[] = [];
    const controlTimer = setInterval(async () => {
      if (linkIds.length === 0) {
        const { rows } = await db.query(`select id from links where rig = 'soak' order by name`);
        linkIds.push(...rows.map((r: { id: number }) => r.id));
        if (linkIds.length === 0) return;
      }
      const id = linkIds[control.sent % linkIds.length];
      control.sent++;
      try {
        const res = await fetch(`http://127.0.0.1:${ports.api}/api/v1/links/${id}/commands`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ command: { command: 'info' }, answerTimeoutMs: 200 }),
        });
        await res.arrayBuffer();
        control.answered++;
        control.statuses.set(res.status, (control.statuses.get(res.status) ?? 0) + 1);
      } catch {
        control.statuses.set(0, (control.statuses.get(0) ?? 0) + 1);
      }
    }, 1000);

    const samples = new Map<string, number[]>([...services.keys()].map((n) => [n, []]));
    const heaps = new Map<string, number[]>([...services.keys()].map((n) => [n, []]));
    const t0 = performance.now();
    const endAt = t0 + minutes * 60_000;
    let nextPrint = t0 + 60_000;
    while (performance.now() < endAt) {
      await sleep(SAMPLE_MS);
      for (const [name, proc] of services) {
        samples.get(name)?.push(rssMb(proc.child.pid!));
        heaps.get(name)?.push(await heapUsedMb(healthPorts.get(name) as number).catch(() => Number.NaN));
      }
      if (performance.now() >= nextPrint) {
        nextPrint += 60_000;
        const { rows } = await db.query(`select coalesce(sum(record_count), 0)::bigint as n from sessions`);
        const rss = [...services].map(([n]) => `${n} ${samples.get(n)?.at(-1)?.toFixed(0)} MB`).join(', ');
        process.stdout.write(
          `${((performance.now() - t0) / 60_000).toFixed(0).padStart(3)} min: ${rows[0].n} stored; SSE reader ${sseReader.records} (missed ${sseReader.missed}); PalmTrace reader ${palmReader.messages}; control ${control.answered}/${control.sent}; RSS ${rss}\n`,
        );
      }
    }
    clearInterval(controlTimer);
    const sentBytes = await Promise.all(targets.map((t) => t.stop()));

    // Every session ends when its target hangs up; wait until each is completely stored.
    const deadline = performance.now() + 5 * 60_000;
    let sessions: Array<{ id: string; record_count: string; record_total: string | null }> = [];
    for (;;) {
      ({ rows: sessions } = await db.query(
        `select id, record_count, record_total from sessions where rig = 'soak' order by started_at`,
      ));
      const complete =
        sessions.length >= LINKS.length &&
        sessions.every((s) => s.record_total !== null && s.record_count === s.record_total);
      if (complete) break;
      if (performance.now() > deadline) break;
      await sleep(1000);
    }
    await sleep(3000); // the live readers' last batches
    const stored = sessions.reduce((a, s) => a + Number(s.record_count), 0);
    const published = sessions.reduce((a, s) => a + Number(s.record_total ?? Number.NaN), 0);
    const reporters = (await (
      await fetch(`http://127.0.0.1:${ports.api}/api/v1/reporters`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as { listener?: { clients: Array<{ messagesSent: number; dropped: number; queued: number }> } };

    process.stdout.write('\nresult\n');
    process.stdout.write(
      `  links: ${sentBytes.map((b) => `${(b / 1e6).toFixed(1)} MB`).join(', ')} sent; ${sessions.length} sessions; ${stored} records stored of ${published} the decoder published\n`,
    );
    process.stdout.write(
      `  SSE reader: ${sseReader.records} records, missed ${sseReader.missed}; PalmTrace reader: ${palmReader.messages} messages\n`,
    );
    for (const c of reporters.listener?.clients ?? []) {
      process.stdout.write(`  PalmTrace client: sent ${c.messagesSent}, dropped ${c.dropped}, queued ${c.queued}\n`);
    }
    process.stdout.write(
      `  control: ${control.sent} commands, ${control.answered} answered (${[...control.statuses].map(([s, n]) => `${s}: ${n}`).join(', ')})\n`,
    );
    process.stdout.write('  RSS (MB): first minutes / last minutes / peak; V8 heap in use (MB): first / last\n');
    const warm = Math.min(12, Math.floor((samples.get('api')?.length ?? 0) / 5));
    for (const [name, values] of samples) {
      const settled = values.slice(warm);
      const fifth = Math.max(1, Math.floor(settled.length / 5));
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
      const first = median(settled.slice(0, fifth));
      const last = median(settled.slice(-fifth));
      const peak = Math.max(...values);
      const heap = (heaps.get(name) ?? []).slice(warm);
      const heapFirst = median(heap.slice(0, fifth));
      const heapLast = median(heap.slice(-fifth));
      const grew = last > first * 1.25;
      if (grew) failed = true;
      process.stdout.write(
        `  ${name.padEnd(11)} ${first.toFixed(0).padStart(5)} / ${last.toFixed(0).padStart(5)} / ${peak.toFixed(0).padStart(5)}  ${grew ? 'GREW' : 'flat'}; heap ${heapFirst.toFixed(0)} / ${heapLast.toFixed(0)}\n`,
      );
    }
    if (stored !== published || Number.isNaN(published)) {
      failed = true;
      process.stdout.write(`  LOST: ${published - stored} records not stored\n`);
    }
    if (sseReader.missed > 0 || sseReader.records !== stored) {
      failed = true;
      process.stdout.write(
        `  the reading SSE client got ${sseReader.records} of ${stored} (missed ${sseReader.missed})\n`,
      );
    }
  } finally {
    for (const close of closers) close();
    for (const proc of services.values()) proc.child.kill('SIGTERM');
    await Promise.all([...services.values()].map((p) => p.exited));
    await db.end().catch(() => {});
    await place.admin.query(`drop database if exists ${place.dbName} with (force)`).catch(() => {});
    await place.admin.end();
    await removeBusPrefix(natsUrl, place.prefix).catch(() => {});
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
