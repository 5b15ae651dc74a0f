// The subpath without the record schema, which takes 0.1 s to load.
import { isProtocol, isValidName, type Protocol } from '@tracehub/contracts/names';
import type { Command } from 'commander';
import { CommandOutput } from '../command-io.js';
import { assertSomethingReads } from './bus-listeners.js';
import { addConnectionOptions, natsConnection } from './connections.js';

interface TailOptions {
  rig?: string;
  link?: string;
  protocol?: string;
  format: string;
  natsUrl: string;
  busPrefix: string;
  force?: boolean;
}

/** `tracehub tail [--rig R] [--link L]`: live records as they are decoded, until Ctrl-C. */
export function registerTail(program: Command): void {
  const cmd = program
    .command('tail')
    .description('print live records as the decoders publish them (Ctrl-C to stop)')
    .option('--rig <rig>', 'only this rig')
    .option('--link <link>', 'only this link')
    .option('-p, --protocol <protocol>', 'only this protocol (qs | stp | swd)')
    .option('-f, --format <format>', 'text | json', 'text')
    .option('--force', 'tail even when no decoder or storage reads the bus prefix');
  addConnectionOptions(cmd, { nats: true });
  cmd.action(async (opts: TailOptions) => {
    if (opts.format !== 'text' && opts.format !== 'json')
      throw new Error(`bad --format '${opts.format}': use text or json`);
    if (opts.protocol && !isProtocol(opts.protocol))
      throw new Error(`unknown protocol '${opts.protocol}': use qs, stp or swd`);
    for (const [what, value] of [
      ['rig', opts.rig],
      ['link', opts.link],
    ] as const) {
      if (value !== undefined && !isValidName(value))
        throw new Error(`bad --${what} '${value}': letters, digits, '_' or '-'`);
    }
    // Loaded here, not at start-up: every other command would pay for the NATS client.
    const { connectBus, parseRecordMessage } = await import('@tracehub/bus');
    const bus = await connectBus({ ...natsConnection(opts), name: 'tracehub-tail', prefix: opts.busPrefix });
    if (!opts.force) {
      await assertSomethingReads(bus, opts.busPrefix, 'tail').catch(async (error: unknown) => {
        await bus.close();
        throw error;
      });
    }
    const filter = bus.names.recFilter({
      protocol: opts.protocol as Protocol | undefined,
      rig: opts.rig,
      link: opts.link,
    });
    const stop = () => void bus.close().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    process.stderr.write(`tailing ${filter} on ${opts.natsUrl}\n`);
    const out = new CommandOutput(process.stdout);
    for await (const msg of bus.nc.subscribe(filter)) {
      let text = '';
      try {
        for (const r of parseRecordMessage(bus.names, msg.subject, msg.headers, msg.data).records) {
          if (opts.format === 'json') text += `${JSON.stringify(r)}\n`;
          else if (r.text !== '') text += `${r.rig}/${r.link} ${r.text}\n`;
        }
      } catch {
        process.stderr.write(`unreadable message on ${msg.subject} skipped\n`);
      }
      if (text) await out.write(text);
      if (out.readerGone) stop();
    }
  });
}
