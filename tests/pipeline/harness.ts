import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { connectBus } from '@tracehub/bus';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import {
  createDb,
  type Database,
  getSession,
  isSessionComplete,
  isSessionLinkComplete,
  type LinkChunk,
  rowToTraceRecord,
  sessionLinkChunks,
  sessionRecords,
} from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { freshDatabase, repoRoot, sleep } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import {
  assertBuilt,
  backendsEnv,
  type PipelineEnv,
  type RunningProcess,
  removeBusPrefix,
  startNode,
} from '../foundation/processes.js';

const run = promisify(execFile);
export const CLI = join(repoRoot, 'apps/cli/dist/main.js');

export function requireBuild(): void {
  assertBuilt([
    'apps/cli/dist/main.js',
    'apps/gateway/dist/main.js',
    'apps/decoder-qs/dist/main.js',
    'apps/decoder-stp/dist/main.js',
    'apps/storage/dist/main.js',
  ]);
}

/** Starts a built service against the test's NATS, database and prefix; resolves once it is ready. */
export async function startService(
  app: 'gateway' | 'decoder-qs' | 'decoder-stp' | 'storage' | 'api',
  env: PipelineEnv,
  extra: Record<string, string> = {},
): Promise<RunningProcess & { pid: number }> {
  const proc = startNode(join(repoRoot, `apps/${app}/dist/main.js`), {
    ...backendsEnv(env),
    HEALTH_PORT: '0',
    DECODER_TICK_MS: '250',
    DECODER_ACK_WAIT_MS: '2000',
    ...extra,
  });
  await proc.waitForLine(/"msg":"ready/, 45_000);
  return Object.assign(proc, { pid: proc.child.pid! });
}

/**
 * The database of a pipeline test that starts its services itself, and those services:
 * `close()` stops them, then closes the database (and drops it, if it was made for the test).
 */
export interface PipelineTestRun {
  databaseUrl: string;
  db: Kysely<Database>;
  /** The services the test started; `close()` stops every one still running. */
  services: RunningProcess[];
  close(): Promise<void>;
}

/** Checks the services are built, then makes a fresh database named after `label` (or opens `databaseUrl`). */
export async function startPipelineTestRun(label: string, databaseUrl?: string): Promise<PipelineTestRun> {
  requireBuild();
  const fresh = databaseUrl === undefined ? await freshDatabase(label) : undefined;
  const url = fresh?.url ?? databaseUrl!;
  const db = createDb(url);
  const services: RunningProcess[] = [];
  return {
    databaseUrl: url,
    db,
    services,
    close: async () => {
      await stopAll(services);
      await db.destroy();
      await fresh?.drop();
    },
  };
}

/** The health port a started service gave in its ready line. */
export function healthPortOf(service: RunningProcess): number {
  return JSON.parse(service.stdout.find((l) => /"msg":"ready/.test(l))!).healthPort as number;
}

export async function stopAll(procs: RunningProcess[]): Promise<void> {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
  await Promise.all(procs.map((p) => p.exited));
}

/**
 * The sum of the series of a service's metric (read from its health port) whose labels
 * include `labels` (e.g. `reason="full"`).
 */
export async function metric(port: number, name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!(line.startsWith(`${name}{`) || line.startsWith(`${name} `))) continue;
    if (labels && !line.includes(labels)) continue;
    sum += Number(line.split(' ').pop());
  }
  return sum;
}

/** `tracehub <args>`; resolves with stdout. */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<string> {
  return (await cliBytes(args, env)).toString('utf8');
}

/** `tracehub <args>`; resolves with stdout's bytes (QS text is Latin-1: a string would change them). */
export async function cliBytes(args: string[], env: Record<string, string> = {}): Promise<Buffer> {
  const { stdout } = await run(process.execPath, [CLI, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    maxBuffer: 512 * 1024 * 1024,
    encoding: 'buffer',
  });
  return stdout;
}

/** `tracehub replay` of `file` as `rig/link` (with `flags`, e.g. sizes); resolves with the session it made. */
export async function replay(
  env: PipelineEnv,
  rig: string,
  link: string,
  protocol: string,
  file: string,
  flags: string[] = [],
): Promise<string> {
  return (
    await cli(['replay', '--rig', rig, '--link', link, '--protocol', protocol, ...flags, file], backendsEnv(env))
  ).trim();
}

/**
 * What `tracehub decode --format json` prints for a file (with `flags`, e.g. sizes or an STP
 * configuration): the expected side of every comparison.
 */
export async function offlineDecode(
  file: string,
  protocol: 'qs' | 'stp' | 'swd',
  flags: string[] = [],
): Promise<TraceRecord[]> {
  const out = await cli(['decode', '--protocol', protocol, '--format', 'json', ...flags, file]);
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TraceRecord);
}

/** The parts of a record that decoding decides (not where or when it was received). */
export function decoded(r: TraceRecord) {
  return {
    seq: r.seq,
    kind: r.kind,
    type: r.type,
    name: r.name,
    targetTs: r.targetTs,
    text: r.text,
    fields: r.fields,
    raw: r.raw,
    qs: r.qs,
    stp: r.stp,
  };
}

/** The lines a QS session's records print, as qspy prints them (a record's text may hold several). */
export { printedLines } from '@tracehub/contracts';

/**
 * The same for STP/SWD, whose output messages are stamped with the host clock when the stream
 * has no timestamps of its own (as on the trace box): the receive time differs between a live
 * replay and an offline decode, so the stamp (`fields.timestamp`) and the message bytes (`raw`,
 * which carry it) are left out. The text is compared whole: it carries device time only.
 */
export function decodedApartFromHostTime(r: TraceRecord) {
  const { raw: _raw, fields, ...rest } = decoded(r);
  const { timestamp: _timestamp, ...otherFields } = fields;
  return { ...rest, fields: otherFields };
}

/** Waits until the session's end and all its records are stored, then returns them in order. */
export async function storedSession(db: Kysely<Database>, session: string, timeoutMs = 60_000): Promise<TraceRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await getSession(db, session);
    if (row && isSessionComplete(row)) break;
    if (Date.now() > deadline) {
      throw new Error(
        `session ${session} not completely stored after ${timeoutMs} ms: ${JSON.stringify(row, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const out: TraceRecord[] = [];
  for await (const row of sessionRecords(db, session)) out.push(rowToTraceRecord(row));
  return out;
}

/** Waits until every raw chunk of the session is stored, then returns the stored link bytes and what was lost. */
export async function storedLinkBytes(
  db: Kysely<Database>,
  session: string,
  timeoutMs = 60_000,
): Promise<{ bytes: Buffer; lost: number; chunks: number }> {
  const deadline = Date.now() + timeoutMs;
  while (!(await isSessionLinkComplete(db, session))) {
    if (Date.now() > deadline)
      throw new Error(`link bytes of session ${session} not completely stored after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const parts: Uint8Array[] = [];
  let lost = 0;
  let chunks = 0;
  let expectedChunk = 0;
  for await (const chunk of sessionLinkChunks(db, session)) {
    // Every chunk once, in order: a doubled or missing one shows here.
    if (chunk.chunk !== expectedChunk)
      throw new Error(`session ${session}: chunk ${chunk.chunk} stored where ${expectedChunk} was due`);
    expectedChunk++;
    parts.push(chunk.data);
    lost += chunk.lost;
    chunks++;
  }
  return { bytes: Buffer.concat(parts), lost, chunks };
}

/** Every stored raw chunk of the session, in order. */
export async function storedChunks(db: Kysely<Database>, session: string): Promise<LinkChunk[]> {
  const chunks: LinkChunk[] = [];
  for await (const chunk of sessionLinkChunks(db, session)) chunks.push(chunk);
  return chunks;
}

/**
 * What the QS decoder service makes of a session's chunks on `rig/link`: each decoded in turn
 * with its receive time and the bytes the gateway dropped before it (`th-lost`), the last one
 * ending the session. The expected side for a link whose bytes were cut.
 */
export function decodeQsChunks(
  chunks: LinkChunk[],
  place: { rig: string; link: string; session: string },
): TraceRecord[] {
  const decoder = new QsDecoder();
  const out: TraceRecord[] = [];
  for (const chunk of chunks) {
    const ctx = { hostNs: chunk.recvNs, lostBytes: chunk.lost };
    const emit = (r: DecodedRecord) =>
      out.push(
        toTraceRecord(r, { ...place, chunk: chunk.chunk, protocol: 'qs', hostNs: chunk.recvNs, seq: out.length }),
      );
    if (chunk.data.length > 0 || chunk.lost > 0) decoder.push(chunk.data, ctx, emit);
    if (chunk.eos) decoder.end(ctx, emit);
  }
  return out;
}

/**
 * Waits until the link has a session, asking every 200 ms up to `tries` times; returns the
 * link's sessions (none if it never had one: the caller's expectation says what was due).
 */
export async function waitForSessions(
  db: Kysely<Database>,
  rig: string,
  link: string,
  tries: number,
): Promise<string[]> {
  let sessions: string[] = [];
  for (let i = 0; i < tries && sessions.length === 0; i++) {
    sessions = await sessionsOf(db, rig, link);
    if (sessions.length === 0) await sleep(200);
  }
  return sessions;
}

export async function sessionsOf(db: Kysely<Database>, rig: string, link: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sessions')
    .select('id')
    .where('rig', '=', rig)
    .where('link', '=', link)
    .orderBy('started_at')
    .execute();
  return rows.map((r) => r.id);
}

export { backendsEnv, connectBus, createDb, type PipelineEnv, removeBusPrefix };
