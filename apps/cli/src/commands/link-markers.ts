import type { ControlAsk } from '@tracehub/bus';
import type { ControlReply } from '@tracehub/contracts';
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
  const upload = linkCommand(
    link,
    'upload',
    "send a file to an STP link's device (UART upload) or an SWD link's (one frame)",
  ).argument('<file>', 'the data to send (at most 512 KiB)');
  // An upload waits up to 2 s for the device's bit rate, then sends at that rate.
  for (const [cmd, waitMs] of [
    [mark, '3000'],
    [timeBase, '3000'],
    [upload, '60000'],
  ] as const) {
    addConnectionOptions(cmd, { nats: true });
    cmd.option('--timeout-ms <ms>', 'how long to wait for the gateway', waitMs);
  }
  upload.action(async (file: string, opts: MarkerOptions) => {
    const { readFileSync } = await import('node:fs');
    const data = readFileSync(file);
    const reply = await ask(opts, { upload: data });
    const r = reply.result as { outcome?: string; bitRate?: number | null; ms?: number } | undefined;
    if (!r) throw new Error(`${opts.rig}/${opts.link}: the gateway could not upload: ${reply.error}`);
    if (!reply.ok) {
      process.stderr.write(`${opts.rig}/${opts.link}: upload failed (${r.outcome}): ${reply.error}\n`);
      process.exitCode = 1;
      return;
    }
    process.stdout.write(`${opts.rig}/${opts.link}: uploaded ${data.length} bytes at ${r.bitRate} b/s in ${r.ms} ms\n`);
  });
  mark.action((comment: string | undefined, opts: MarkerOptions) =>
    askGateway(opts, { marker: comment === undefined ? { kind: 'user' } : { kind: 'user', comment } }),
  );
  timeBase.action((offsetNs: string, opts: MarkerOptions) =>
    askGateway(opts, { marker: { kind: 'timeBase', offsetNs } }),
  );
}

async function askGateway(opts: MarkerOptions, request: ControlAsk): Promise<void> {
  const reply = await ask(opts, request);
  if (!reply.ok) throw new Error(`${opts.rig}/${opts.link}: the gateway could not set the marker: ${reply.error}`);
  process.stdout.write(`${opts.rig}/${opts.link}: marker set in session ${reply.session}\n`);
}

/** Asks the link's gateway over NATS; its reply. */
async function ask(opts: MarkerOptions, request: ControlAsk): Promise<ControlReply> {
  const { connectBus, requestControl } = await import('@tracehub/bus');
  const bus = await connectBus({ ...natsConnection(opts), name: 'tracehub-link', prefix: opts.busPrefix });
  try {
    return await requestControl(bus, { rig: opts.rig, link: opts.link }, request, Number(opts.timeoutMs) || 3000);
  } finally {
    await bus.close();
  }
}
