import { statSync } from 'node:fs';
// The subpath without the record schema, which takes 0.1 s to load.
import { isProtocol, isValidName } from '@tracehub/contracts/names';
import type { ReplayPace } from '@tracehub/link';
import type { Command } from 'commander';
import { addLinkSettingOptions, type LinkSettingFlags, linkSettingsFromOptions } from '../link-setting-options.js';
import { ProgressBar } from '../progress-bar.js';
import { assertSomethingReads } from './bus-listeners.js';
import { addConnectionOptions, linkCommand, natsConnection } from './connections.js';

interface ReplayOptions extends LinkSettingFlags {
  rig: string;
  link: string;
  protocol: string;
  pace: string;
  bps: string;
  natsUrl: string;
  busPrefix: string;
  force?: boolean;
}

/**
 * `tracehub replay --rig R --link L --protocol P FILE`: the gateway's file link, in process,
 * as one link session. Exits when JetStream has acknowledged every chunk; prints the session.
 */
export function registerReplay(program: Command): void {
  const cmd = linkCommand(
    program,
    'replay',
    'replay a capture file into the pipeline as one link session; prints the session id',
  )
    .argument('<file>', 'capture file')
    .requiredOption('-p, --protocol <protocol>', 'qs | stp | swd')
    .option('--pace <pace>', 'original (at the link bit rate) | max', 'max')
    .option('--bps <bits>', 'link bit rate for --pace original (8N1)', '115200')
    .option('--force', 'replay even when no decoder or storage reads the bus prefix');
  addLinkSettingOptions(cmd);
  addConnectionOptions(cmd, { nats: true });
  cmd.action(async (file: string, opts: ReplayOptions) => {
    if (!isProtocol(opts.protocol)) throw new Error(`unknown protocol '${opts.protocol}': use qs, stp or swd`);
    for (const [what, value] of [
      ['rig', opts.rig],
      ['link', opts.link],
    ] as const) {
      if (!isValidName(value))
        throw new Error(`bad --${what} '${value}': use letters, digits, '_' or '-' (at most 64)`);
    }
    const settings = linkSettingsFromOptions(opts.protocol, opts);
    if (opts.pace !== 'max' && opts.pace !== 'original')
      throw new Error(`bad --pace '${opts.pace}': use original or max`);
    let total: number;
    try {
      total = statSync(file).size;
    } catch (err) {
      throw new Error(`cannot read ${file}: ${(err as Error).message}`);
    }
    // Loaded here, not at start-up: every other command would pay for the gateway and the NATS client.
    const [{ connectBus, ensureTopology }, { FileSource, Gateway }] = await Promise.all([
      import('@tracehub/bus'),
      import('@tracehub/link'),
    ]);
    const progress = ProgressBar.forBytes(total, 'replay ');
    const source = new FileSource(file, {
      pace: opts.pace as ReplayPace,
      bitsPerSecond: Number(opts.bps),
      readBytes: 16 * 1024,
      onProgress: (done) => progress?.update(done),
    });
    const bus = await connectBus({
      ...natsConnection(opts),
      name: `tracehub-replay/${opts.rig}/${opts.link}`,
      prefix: opts.busPrefix,
    });
    try {
      if (!opts.force) await assertSomethingReads(bus, opts.busPrefix, 'replay');
      // Replicas of streams this replay may have to make (a cluster's TRACEHUB_STREAM_REPLICAS).
      await ensureTopology(bus, { replicas: Number(process.env.TRACEHUB_STREAM_REPLICAS ?? 1) || 1 });
      const gateway = new Gateway({
        bus,
        link: { protocol: opts.protocol, rig: opts.rig, link: opts.link },
        source,
        settings,
        control: false,
      });
      await gateway.start();
      await source.finished;
      await gateway.publisher.idle();
      await gateway.stop();
      progress?.done();
      const { stats, sessions } = gateway.publisher;
      process.stderr.write(
        `replayed ${stats.bytesPublished} bytes in ${stats.chunksPublished} chunks to ${opts.protocol}/${opts.rig}/${opts.link}\n`,
      );
      // A session begins with its first byte: an empty file starts none.
      if (sessions.length === 0) process.stderr.write('the file is empty: no session was started\n');
      else process.stdout.write(`${sessions[0]}\n`);
    } finally {
      await bus.close();
    }
  });
}
