import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import type { Database } from '@tracehub/db';
import { migrateToLatest } from '@tracehub/db';
import { CuttableTcpProxy, fixturePath, freePort, natsUrl, repoRoot, uniquePrefix } from '@tracehub/tests/support';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectTarget, writeTo } from '../support/tcp-target.js';
import {
  backendsEnv,
  CLI,
  cli,
  connectBus,
  decoded,
  decodedApartFromHostTime,
  offlineDecode,
  type PipelineEnv,
  type PipelineTestRun,
  removeBusPrefix,
  startPipelineTestRun,
  startService,
  stopAll,
  storedLinkBytes,
  storedSession,
  waitForSessions,
} from './harness.js';

let run: PipelineTestRun;
let db: Kysely<Database>;
let env: PipelineEnv;
let work: string;

beforeAll(async () => {
  run = await startPipelineTestRun('pipeline');
  ({ db } = run);
  await migrateToLatest(db);
  env = { natsUrl: natsUrl(), databaseUrl: run.databaseUrl, prefix: uniquePrefix('pl') };
  work = mkdtempSync(join(tmpdir(), 'th-pipeline-'));
  run.services.push(
    await startService('decoder-qs', env),
    await startService('decoder-stp', env),
    await startService('storage', env),
  );
}, 120_000);

afterAll(async () => {
  await run?.close();
  if (env) await removeBusPrefix(env.natsUrl, env.prefix);
  rmSync(work, { recursive: true, force: true });
});

/** How many records of a link are stored so far. */
async function storedOnLink(link: string): Promise<number> {
  const row = await db
    .selectFrom('record_blocks')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('record_count'), eb.lit(0)).as('n'))
    .where('link', '=', link)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** `tracehub replay` arguments: a QS capture at 1 MB/s in its recorded pace, long enough to act in. */
function pacedReplay(rig: string, link: string, file: string): string[] {
  return ['replay', '--rig', rig, '--link', link, '--protocol', 'qs', '--pace', 'original', '--bps', '1000000', file];
}

/** A long QS capture: a fixture repeated, so that "halfway" lasts long enough to act in. */
function longCapture(name: string, times: number): string {
  const one = readFileSync(fixturePath('qs', name));
  const path = join(work, `${name}.x${times}`);
  writeFileSync(path, Buffer.concat(Array.from({ length: times }, () => one)));
  return path;
}

/** The lines the reference qspy printed for a capture (`<name>.qspy.txt` beside it), as tracehub prints them. */
function referenceText(file: string): string {
  const lines = readFileSync(file.replace(/\.qs$/, '.qspy.txt'), 'latin1').split('\n');
  const start = lines.findIndex((l) => l.includes('<COMMS> File     Opened File=')) + 1;
  return `${lines.slice(start, lines.lastIndexOf('QSPY Done') - 1).join('\n')}\n`;
}

describe('the pipeline', () => {
  /** Replays `file` as rigR/`link`: stored as decode prints it, and as its reference printed it. */
  async function replayedAsReference(file: string, link: string): Promise<void> {
    const name = file.slice(file.lastIndexOf('/') + 1);
    const session = (
      await cli(['replay', '--rig', 'rigR', '--link', link, '--protocol', 'qs', file], backendsEnv(env))
    ).trim();
    const stored = await storedSession(db, session);
    const expected = await offlineDecode(file, 'qs');
    expect(stored.length, name).toBe(expected.length);
    expect(stored.map(decoded), name).toEqual(expected.map(decoded));
    expect(stored.every((r) => r.rig === 'rigR' && r.link === link && r.session === session)).toBe(true);
    const printed = await cli(['records', '--session', session, '--wait', '30'], backendsEnv(env));
    const decodedText = await cli(['decode', '--protocol', 'qs', file]);
    expect(printed, name).toBe(decodedText);
    // These captures are ASCII: the UTF-8 of stdout is qspy's bytes.
    expect(printed, name).toBe(referenceText(file));
  }

  it('stores a replayed capture exactly as tracehub decode prints it, and tracehub records shows it', async () => {
    // QP 7.4 captures, printed as qspy 7.4 prints them.
    for (const name of ['dpp_qv.qs', 'fmt_v64.qs', 'dpp_qv_garbage.qs']) {
      await replayedAsReference(fixturePath('qs', name), 'file1');
    }
  }, 120_000);

  it('stores QP 8.x captures and generated 8.x streams as qspy 8.1.3 prints them', async () => {
    const generated = ['qs8_v813.qs', 'qs8_v800.qs', 'qs8_dict_capacity.qs', 'qs8_long.qs', 'qs8_random_ids.qs'];
    const files = [
      ...readdirSync(fixturePath('qs8'))
        .filter((f) => f.endsWith('.qs'))
        .map((f) => fixturePath('qs8', f)),
      ...generated.map((f) => join(repoRoot, 'packages/qs/test/fixtures', f)),
    ];
    for (const file of files) await replayedAsReference(file, 'file8');
  }, 240_000);

  it('stores what a target streams to a tcp-listen gateway, cut into any pieces', async () => {
    const port = await freePort();
    const gateway = await startService('gateway', env, { TRACEHUB_LINKS: `qs/rigT/tcp0=tcp-listen:127.0.0.1:${port}` });
    try {
      const file = fixturePath('qs', 'dpp_posix.qs');
      const bytes = readFileSync(file);
      const target = await connectTarget(port);
      for (let at = 0; at < bytes.length; ) {
        const n = 1 + Math.floor(Math.random() * 700);
        await writeTo(target, bytes.subarray(at, at + n));
        at += n;
        if (Math.random() < 0.1) await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise<void>((r) => target.end(() => r()));
      const sessions = await waitForSessions(db, 'rigT', 'tcp0', 100);
      expect(sessions).toHaveLength(1);
      const stored = await storedSession(db, sessions[0]);
      const expected = await offlineDecode(file, 'qs');
      expect(stored.map(decoded)).toEqual(expected.map(decoded));
    } finally {
      await stopAll([gateway]);
    }
  }, 120_000);

  it('loses and doubles nothing when a decoder is killed (SIGKILL) halfway with another one running', async () => {
    const second = await startService('decoder-qs', env);
    run.services.push(second);
    const file = longCapture('dpp_qv.qs', 40);
    const replay = spawn(process.execPath, [CLI, ...pacedReplay('rigK', 'kill', file)], {
      cwd: repoRoot,
      env: { ...process.env, ...backendsEnv(env) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let session = '';
    replay.stdout.on('data', (d) => (session += String(d)));
    const replayed = new Promise<void>((r) => replay.on('exit', () => r()));
    // Halfway: once about half the session is stored, kill whichever decoder holds the link.
    const bus = await connectBus({ url: env.natsUrl, name: 'kill-test', prefix: env.prefix });
    let killed = 0;
    try {
      const leases = await new Kvm(bus.js).open(bus.names.leaseBucket);
      for (let i = 0; i < 300 && !killed; i++) {
        await new Promise((r) => setTimeout(r, 100));
        if ((await storedOnLink('kill')) < 5000) continue;
        const holder = (await leases.get('qs.rigK.kill'))?.string() ?? '';
        killed = Number(/:(\d+)$/.exec(holder)?.[1] ?? 0);
        const victim = run.services.find((s) => s.child.pid === killed);
        expect(victim, `lease holder ${holder}`).toBeDefined();
        victim!.child.kill('SIGKILL');
      }
    } finally {
      await bus.close();
    }
    expect(killed).toBeGreaterThan(0);
    await replayed;
    const stored = await storedSession(db, session.trim(), 90_000);
    const expected = await offlineDecode(file, 'qs');
    expect(stored.length).toBe(expected.length);
    expect(stored.map(decoded)).toEqual(expected.map(decoded));
    const link = await storedLinkBytes(db, session.trim());
    expect(link.bytes.equals(readFileSync(file))).toBe(true);
    // The killed decoder is no longer one of the services to stop.
    run.services.splice(
      run.services.findIndex((s) => s.child.pid === killed),
      1,
    );
  }, 180_000);
});

describe('several links at once', () => {
  it("keeps four links of different protocols apart: no record lands in another link's session", async () => {
    // SWD reverse-channel frames: C0 start, C1 end, 7D escapes (with C0/C1/7D inside).
    const swdFrames = Array.from({ length: 200 }, (_, i) =>
      Buffer.from([0xc0, i & 0xff, 0x7d, 0xe0, 0x7d, 0xe1, 0x7d, 0x5d, 0x41, 0xc1]),
    );
    const swdFile = join(work, 'frames.swd');
    writeFileSync(swdFile, Buffer.concat(swdFrames));
    const links = [
      { link: 'qs-a', protocol: 'qs' as const, file: fixturePath('qs', 'dpp_qv.qs') },
      { link: 'qs-b', protocol: 'qs' as const, file: fixturePath('qs', 'defer.qs') },
      { link: 'stp-a', protocol: 'stp' as const, file: fixturePath('stp', 'coresight_stm_only.stp') },
      { link: 'swd-a', protocol: 'swd' as const, file: swdFile },
    ];
    const sessions = await Promise.all(
      links.map(async (l) =>
        (
          await cli(
            [
              'replay',
              '--rig',
              'rigM',
              '--link',
              l.link,
              '--protocol',
              l.protocol,
              '--pace',
              'original',
              '--bps',
              '400000',
              l.file,
            ],
            backendsEnv(env),
          )
        ).trim(),
      ),
    );
    for (const [i, l] of links.entries()) {
      const stored = await storedSession(db, sessions[i]);
      const expected = await offlineDecode(l.file, l.protocol);
      expect(stored.length, l.link).toBeGreaterThan(0);
      const view = l.protocol === 'qs' ? decoded : decodedApartFromHostTime;
      expect(stored.map(view), l.link).toEqual(expected.map(view));
      expect(
        stored.every((r) => r.link === l.link && r.protocol === l.protocol && r.session === sessions[i]),
        l.link,
      ).toBe(true);
    }
    const perLink = await db
      .selectFrom('record_blocks')
      .select(['link', 'session'])
      .where('rig', '=', 'rigM')
      .groupBy(['link', 'session'])
      .execute();
    expect(perLink.map((r) => `${r.link}:${r.session}`).sort()).toEqual(
      links.map((l, i) => `${l.link}:${sessions[i]}`).sort(),
    );
  }, 120_000);
});

describe('the pipeline when storage dies', () => {
  it('loses and doubles nothing, in records or session counts, when storage is killed (SIGKILL) mid-stream', async () => {
    const prefix = uniquePrefix('plst');
    const local: PipelineEnv = { natsUrl: env.natsUrl, databaseUrl: run.databaseUrl, prefix };
    // Small batches, so a kill lands between and inside transactions; a short ack wait, so
    // what the dead storage held comes back to the next one in seconds.
    const storageSettings = { STORAGE_BATCH_RECORDS: '500', STORAGE_ACK_WAIT_MS: '2000' };
    const procs = [await startService('decoder-qs', local), await startService('storage', local, storageSettings)];
    try {
      const file = longCapture('dpp_qv.qs', 40);
      const replay = cli(pacedReplay('rigS', 'storekill', file), { ...backendsEnv(env), TRACEHUB_BUS_PREFIX: prefix });
      let storedBeforeKill = 0;
      for (let i = 0; i < 300 && storedBeforeKill < 3000; i++) {
        await new Promise((r) => setTimeout(r, 50));
        storedBeforeKill = await storedOnLink('storekill');
      }
      expect(storedBeforeKill).toBeGreaterThanOrEqual(3000);
      procs[1].child.kill('SIGKILL');
      await procs[1].exited;
      procs.push(await startService('storage', local, storageSettings));
      const session = (await replay).trim();
      const stored = await storedSession(db, session, 90_000);
      const expected = await offlineDecode(file, 'qs');
      expect(stored.length).toBe(expected.length);
      expect(stored.map(decoded)).toEqual(expected.map(decoded));
      const counts = await db.selectFrom('sessions').selectAll().where('id', '=', session).executeTakeFirstOrThrow();
      expect(Number(counts.record_count)).toBe(expected.length);
      expect(Number(counts.error_count)).toBe(expected.filter((r) => r.kind === 'error').length);
      expect(Number(counts.record_total)).toBe(expected.length);
      // The link's bytes too: every chunk once, byte for byte.
      const link = await storedLinkBytes(db, session);
      expect(link.bytes.equals(readFileSync(file))).toBe(true);
      expect(Number(counts.link_chunks)).toBe(link.chunks);
    } finally {
      await stopAll(procs);
      await removeBusPrefix(env.natsUrl, prefix);
    }
  }, 240_000);
});

describe('the pipeline while Postgres is away', () => {
  it('stores exactly the decoded records after a 10 s outage mid-stream', async () => {
    // Storage reaches Postgres through a proxy that the test cuts for 10 s.
    const proxy = new CuttableTcpProxy('127.0.0.1', Number(new URL(run.databaseUrl).port || 5432));
    await proxy.open();
    const viaProxy = new URL(run.databaseUrl);
    viaProxy.port = String(proxy.listenPort);
    viaProxy.hostname = '127.0.0.1';
    const prefix = uniquePrefix('plpg');
    const local: PipelineEnv = { natsUrl: env.natsUrl, databaseUrl: run.databaseUrl, prefix };
    const procs = [
      await startService('decoder-qs', local),
      await startService('storage', { ...local, databaseUrl: viaProxy.toString() }),
    ];
    try {
      const file = longCapture('fmt_v64.qs', 30);
      const replay = cli(pacedReplay('rigP', 'pg', file), { ...backendsEnv(env), TRACEHUB_BUS_PREFIX: prefix });
      await new Promise((r) => setTimeout(r, 1000));
      await proxy.cut();
      await new Promise((r) => setTimeout(r, 10_000));
      await proxy.open();
      const session = (await replay).trim();
      const stored = await storedSession(db, session, 90_000).catch((err: Error) => {
        // What storage said while it failed to catch up is the first thing to read.
        const output = procs.map((p, i) => `${['decoder-qs', 'storage'][i]}:\n${p.stdout.slice(-30).join('\n')}`);
        throw new Error(`${err.message}\n${output.join('\n')}`);
      });
      const expected = await offlineDecode(file, 'qs');
      expect(stored.length).toBe(expected.length);
      expect(stored.map(decoded)).toEqual(expected.map(decoded));
      const link = await storedLinkBytes(db, session);
      expect(link.bytes.equals(readFileSync(file))).toBe(true);
    } finally {
      await stopAll(procs);
      await proxy.cut();
      await removeBusPrefix(env.natsUrl, prefix);
    }
  }, 180_000);
});
