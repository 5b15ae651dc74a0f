// `npm start` as a lab runs it: every service under the supervisor, a target streaming to the
// gateway over TCP, and each service killed in turn with SIGKILL.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database } from '@tracehub/db';
import { fixturePath, freePort, natsUrl, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendsEnv, type RunningProcess, startNode, within } from '../foundation/processes.js';
import { connectTargetOnceListening } from '../support/tcp-target.js';
import {
  decoded,
  offlineDecode,
  type PipelineTestRun,
  removeBusPrefix,
  startPipelineTestRun,
  storedSession,
  waitForSessions,
} from './harness.js';

let run: PipelineTestRun;
let db: Kysely<Database>;
let work: string;
const prefix = uniquePrefix('sup');

beforeAll(async () => {
  run = await startPipelineTestRun('supervisor');
  ({ db } = run);
  work = mkdtempSync(join(tmpdir(), 'th-supervisor-'));
});

afterAll(async () => {
  await run?.close();
  await removeBusPrefix(natsUrl(), prefix);
  rmSync(work, { recursive: true, force: true });
});

/** The first line after `from` in the supervisor's output that matches; waits for it. */
async function lineAfter(start: RunningProcess, from: number, pattern: RegExp, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const at = start.stdout.findIndex((l, i) => i >= from && pattern.test(l));
    if (at >= 0) return at;
    if (Date.now() > deadline || start.child.exitCode !== null) {
      throw new Error(
        `no line matching ${pattern} after line ${from}; output:\n${start.stdout.slice(from).join('\n')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A QP/Spy target connected to the gateway: streams a capture again and again until told to stop. */
class StreamingTarget {
  readonly sent: Buffer[] = [];
  closedEarly = '';
  private stopping = false;
  private readonly capture = readFileSync(fixturePath('qs', 'dpp_qv.qs'));
  private constructor(private readonly socket: net.Socket) {
    socket.on('error', (e) => (this.closedEarly ||= `error: ${e.message}`));
    socket.on('close', () => {
      if (!this.stopping) this.closedEarly ||= 'the gateway closed the connection';
    });
  }

  static async connect(port: number): Promise<StreamingTarget> {
    return new StreamingTarget(await connectTargetOnceListening(port));
  }

  /** Writes pieces of 1..700 bytes, about 100 kB/s, until `stop()`. */
  readonly streaming = (async () => {
    await Promise.resolve();
    let at = 0;
    while (!this.stopping && !this.closedEarly) {
      const n = 1 + Math.floor(Math.random() * 700);
      const piece = this.capture.subarray(at, at + n);
      at = (at + piece.length) % this.capture.length;
      this.sent.push(piece);
      await new Promise<void>((r) => this.socket.write(piece, () => r()));
      await new Promise((r) => setTimeout(r, 4));
    }
  })();

  async stop(): Promise<Buffer> {
    this.stopping = true;
    await this.streaming;
    await new Promise<void>((r) => this.socket.end(() => r()));
    return Buffer.concat(this.sent);
  }
}

describe('npm start supervising the services', () => {
  it('restarts each service killed with SIGKILL while the target stays connected, losing and doubling nothing', async () => {
    const port = await freePort();
    const start = startNode('scripts/start-all.mjs', {
      ...backendsEnv({ natsUrl: natsUrl(), databaseUrl: run.databaseUrl, prefix }),
      TRACEHUB_HEALTH_PORT_BASE: '0',
      API_PORT: '0',
      TRACEHUB_LINKS: `qs/rigS/tcp0=tcp-listen:127.0.0.1:${port}`,
      DECODER_ACK_WAIT_MS: '2000',
    });
    let target: StreamingTarget | undefined;
    try {
      for (const app of ['gateway', 'decoder-qs', 'decoder-stp', 'storage', 'api']) {
        await lineAfter(start, 0, new RegExp(`^${app} +\\| .*"msg":"ready`), 60_000);
      }
      target = await StreamingTarget.connect(port);
      await new Promise((r) => setTimeout(r, 1000));

      for (const app of ['decoder-qs', 'storage', 'api', 'decoder-stp']) {
        const running = [...start.stdout]
          .reverse()
          .find((l) => new RegExp(`^start +\\| ${app} running \\(pid \\d+\\)`).test(l));
        const pid = Number(/pid (\d+)/.exec(running ?? '')?.[1]);
        expect(pid, app).toBeGreaterThan(0);
        const from = start.stdout.length;
        process.kill(pid, 'SIGKILL');
        await lineAfter(
          start,
          from,
          new RegExp(`^start +\\| ${app} stopped on its own \\(killed by SIGKILL\\)`),
          10_000,
        );
        await lineAfter(start, from, new RegExp(`^${app} +\\| .*"msg":"ready`), 60_000);
        // Let the link stream a while with the service back before the next kill.
        await new Promise((r) => setTimeout(r, 1500));
        expect(target.closedEarly, `after killing ${app}`).toBe('');
      }

      const bytes = await target.stop();
      const file = join(work, 'streamed.qs');
      writeFileSync(file, bytes);
      const sessions = await waitForSessions(db, 'rigS', 'tcp0', 150);
      expect(sessions).toHaveLength(1);
      const stored = await storedSession(db, sessions[0], 90_000);
      const expected = await offlineDecode(file, 'qs');
      expect(stored.length).toBe(expected.length);
      expect(stored.map(decoded)).toEqual(expected.map(decoded));

      start.child.kill('SIGTERM');
      const { value: code } = await within(start.exited, 10_000, 'stopping every service');
      expect(code).toBe(0);
      expect(start.stdout.at(-1)).toMatch(/every service stopped/);
    } finally {
      await target?.stop().catch(() => {});
      if (start.child.exitCode === null) {
        start.child.kill('SIGTERM');
        await within(start.exited, 10_000, 'stopping after a failure').catch(() => start.child.kill('SIGKILL'));
      }
    }
  }, 300_000);
});
