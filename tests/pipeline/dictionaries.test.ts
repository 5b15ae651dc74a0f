import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TraceRecord } from '@tracehub/contracts';
import { upsertLink } from '@tracehub/db';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { escapeFrame, QsFrameBuilder, QsPayloadWriter } from '@tracehub/qs';
import { fixturePath, fixturesDir, repoRoot, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { connectTarget } from '../support/tcp-target.js';
import { backendsEnv, cli, replay, storedSession } from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';

// Dictionaries per link, as qspy keeps them: across reconnects until a reset, and from a
// .dic file for a target joined mid-run. Real decoder and storage processes, real NATS and
// Postgres; targets connect to tcp-listen links, a session per connection.

let pipeline: PipelineWithApi;
let work: string;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('dicts', { services: ['decoder-qs', 'storage'] });
  work = mkdtempSync(join(tmpdir(), 'th-dicts-'));
}, 120_000);

afterAll(async () => {
  for (const { gateway } of gateways.values()) await gateway.stop();
  await pipeline?.close();
  rmSync(work, { recursive: true, force: true });
});

const gateways = new Map<string, { gateway: Gateway; source: TcpListenSource }>();

/**
 * One session of a link: a target connects to the link's tcp-listen gateway, sends the bytes
 * and hangs up, as a real target that resets or reconnects does.
 */
async function session(link: string, bytes: Uint8Array): Promise<TraceRecord[]> {
  let entry = gateways.get(link);
  if (!entry) {
    const source = new TcpListenSource('127.0.0.1', 0);
    const gateway = new Gateway({
      bus: pipeline.bus,
      link: { protocol: 'qs', rig: 'rigD', link },
      source,
      control: false,
    });
    await gateway.start();
    entry = { gateway, source };
    gateways.set(link, entry);
  }
  const before = entry.gateway.publisher.sessions.length;
  const target = await connectTarget(entry.source.boundPort);
  await new Promise<void>((resolve) => target.end(bytes, () => resolve()));
  const { gateway } = entry;
  await waitUntil(async () => gateway.publisher.sessions.length > before, 10_000, 'the session to start');
  return storedSession(pipeline.db, gateway.publisher.sessions[before] as string);
}

/** The frames of a session's ordinary records (no target info, no dictionary records), escaped again. */
function recordFrames(records: TraceRecord[]): Uint8Array {
  const frames = records
    .filter((r) => r.kind === 'record' && r.raw !== '')
    .map((r) => escapeFrame(Buffer.from(r.raw, 'base64')));
  return Buffer.concat(frames);
}

const lines = (records: TraceRecord[]) => records.filter((r) => r.kind === 'record').map((r) => r.text);

describe('dictionaries per link', () => {
  it('keeps the names of a target that reconnects without a reset, and exports them as qspy would save them', async () => {
    const first = await session('uart0', readFileSync(fixturePath('qs', 'dpp_qv.qs')));
    const named = lines(first);
    expect(named.some((t) => t.includes('Philo_inst['))).toBe(true);
    // The target comes back without a reset: no target info, no dictionary records.
    const again = await session('uart0', recordFrames(first));
    expect(again.some((r) => r.kind === 'dict' || r.name === 'QS_TARGET_INFO')).toBe(false);
    expect(lines(again)).toEqual(named);

    // On another link, the same frames alone show addresses...
    const stranger = await session('uart1', recordFrames(first));
    expect(lines(stranger)).not.toEqual(named);
    // ...until it is given the first session's dictionaries as a .dic file.
    const dic = join(work, 'dpp.dic');
    await cli(['dict', 'export', '--session', first[0]?.session as string, '-o', dic], backendsEnv(pipeline.env));
    const text = readFileSync(dic, 'latin1');
    expect(text).toMatch(/^-v\d{3}\n-T\d\n-O\d\n-F\d\n-S\d\n-E\d\n-Q\d\n-P\d\n-B\d\n-C\d\n-t\d{6}_\d{6}\n\nObj-Dic:\n/);
    expect(text).toContain(' Philo_inst[0]\n');
    const fromApi = await pipeline.app.inject({
      url: `/api/v1/sessions/${first[0]?.session}/dictionaries.dic`,
      headers: { authorization: `Bearer ${READ_TOKEN}` },
    });
    expect(fromApi.statusCode).toBe(200);
    expect(fromApi.rawPayload.equals(readFileSync(dic))).toBe(true);
    expect(await cli(['dict', 'import', '--rig', 'rigD', '--link', 'uart1', dic], backendsEnv(pipeline.env))).toMatch(
      /rigD\/uart1: \d+ names from .*dpp\.dic \(applies from the next session\)/,
    );
    const joined = await session('uart1', recordFrames(first));
    expect(lines(joined)).toEqual(named);
  }, 180_000);

  it("names a mid-run target from qspy's own .dic file of its build", async () => {
    await upsertLink(pipeline.db, { rig: 'rigD', name: 'uart2', protocol: 'qs' });
    const dic = join(fixturesDir, 'qspy-udp', 'qspy_cwd', 'qspy261123_180225.dic');
    await cli(['dict', 'import', '--rig', 'rigD', '--link', 'uart2', dic], backendsEnv(pipeline.env));
    // A state entry of that build (8-byte pointers): Philo_inst[2] entering Philo_eating, as the .dic names them.
    const frame = new QsFrameBuilder().frame(1, new QsPayloadWriter().uint(0x40e190, 8).uint(0x40158d, 8).toBytes());
    const stored = await session('uart2', frame);
    expect(stored.find((r) => r.name === 'QS_QEP_STATE_ENTRY')?.text).toContain(
      'St-Entry Obj=Philo_inst[2],State=Philo_eating',
    );
    await expect(
      cli(
        ['dict', 'import', '--rig', 'rigD', '--link', 'uart2', fixturePath('qs', 'dpp_qv.qs')],
        backendsEnv(pipeline.env),
      ),
    ).rejects.toThrow(/is not a \.dic file qspy would read: line 1/);
  }, 120_000);

  it('replays a QP 8.1 capture joined mid-run with --dictionaries FILE as qspy 8.1.3 prints it with -d FILE', async () => {
    const dicDir = join(repoRoot, 'apps/cli/test/fixtures/qspy-dic');
    // The capture without its first 1633 bytes (target info and dictionaries), as the fixture's README says.
    const file = join(work, 'seq-dpp-qpc_midstream.qs');
    writeFileSync(file, readFileSync(fixturePath('qs8', 'seq-dpp-qpc.qs')).subarray(1633));
    const session = await replay(pipeline.env, 'rigD', 'replay8', 'qs', file, [
      '--dictionaries',
      join(dicDir, 'seq-dpp-qpc.dic'),
    ]);
    const stored = await storedSession(pipeline.db, session);
    const qspy = readFileSync(join(dicDir, 'seq-dpp-qpc_midstream.dic.qspy.txt'), 'latin1').split('\n');
    const start = qspy.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
    // qspy's own lines about the file are not records of the stream (the README there).
    const expected = qspy
      .slice(start, qspy.lastIndexOf('QSPY Done') - 1)
      .filter((l) => !/^ {3}<QSPY-> (Reading dictionaries from|Dictionaries saved to) File=/.test(l));
    const printed = stored.filter((r) => r.text !== '').flatMap((r) => r.text.split('\n'));
    expect(printed).toEqual(expected);
  }, 120_000);
});
