import type { ControlAsk } from '@tracehub/bus';
import { type Command, InvalidArgumentError } from 'commander';
import { addConnectionOptions, linkCommand, natsConnection } from './connections.js';

interface MarkerOptions {
  rig: string;
  link: string;
  natsUrl: string;
  natsCreds?: string;
  natsTlsCa?: string;
  busPrefix: string;
  timeoutMs: string;
}

/** A time-base offset: an integer number of ns, negative allowed. */
function parseOffsetNs(value: string): string {
  if (!/^-?[0-9]{1,18}$/.test(value))
    throw new InvalidArgumentError('must be an integer number of ns (at most 18 digits)');
  return value;
}

/**
 * `tracehub link mark [comment]` and `tracehub link time-base <offsetNs>`: a marker on a live
 * link through its gateway, after every byte it has read (as `POST /links/{id}/markers` and
 * `/time-base`); prints the session it went into, exit 1 when the gateway could not.
 */
export function registerLinkMarkers(link: Command): void {
  const mark = linkCommand(
    link,
    'mark',
    'set a user marker on a live link (STP: marker 0x02; QS: a note record)',
  ).argument('[comment]', 'the marker comment');
  const timeBase = linkCommand(
    link,
    'time-base',
    "set an STP link's time base from this point: output time = receive time + offsetNs (two 0x03 markers)",
  ).argument('<offsetNs>', 'offset in ns (negative allowed)', parseOffsetNs);
  for (const cmd of [mark, timeBase]) {
    addConnectionOptions(cmd, { nats: true });
    cmd.option('--timeout-ms <ms>', 'how long to wait for the gateway', '3000');
  }
  mark.action((comment: string | undefined, opts: MarkerOptions) =>
    askGateway(opts, { marker: comment === undefined ? { kind: 'user' } : { kind: 'user', comment } }),
  );
  timeBase.action((offsetNs: string, opts: MarkerOptions) =>
    askGateway(opts, { marker: { kind: 'timeBase', offsetNs } }),
  );
}

async function askGateway(opts: MarkerOptions, request: ControlAsk): Promise<void> {
  const { connectBus, requestControl } = await import('@tracehub/bus');
  const bus = await connectBus({ ...natsConnection(opts), name: 'tracehub-link', prefix: opts.busPrefix });
  try {
    const reply = await requestControl(
      bus,
      { rig: opts.rig, link: opts.link },
      request,
      Number(opts.timeoutMs) || 3000,
    );
    if (!reply.ok) throw new Error(`${opts.rig}/${opts.link}: the gateway could not set the marker: ${reply.error}`);
    process.stdout.write(`${opts.rig}/${opts.link}: marker set in session ${reply.session}\n`);
  } finally {
    await bus.close();
  }
}
