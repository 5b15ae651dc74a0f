import type { Subscription } from '@nats-io/transport-node';
import type { Bus } from '@tracehub/bus';
import type { ControlReply, ControlRequest, LinkAddress } from '@tracehub/contracts';
import { LinkPublisher, type LinkPublisherOptions } from './link-publisher.js';
import type { LinkSource } from './link-source.js';

export interface GatewayOptions extends Omit<LinkPublisherOptions, 'bus' | 'link'> {
  bus: Bus;
  link: LinkAddress;
  source: LinkSource;
  /** Answer control requests on `ctl.<rig>.<link>` (off for one-shot replays). */
  control?: boolean;
}

const MAX_CONTROL_BYTES = 64 * 1024;

/**
 * One link's gateway: the source reads, the publisher turns reads into raw chunks on the bus,
 * and control requests write bytes back to the target.
 */
export class Gateway {
  readonly publisher: LinkPublisher;
  private control: Subscription | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { bus, link, source: _source, control: _control, ...publisherOptions } = options;
    this.publisher = new LinkPublisher({
      bus,
      link,
      ...publisherOptions,
      sealOnPauseNs: publisherOptions.sealOnPauseNs ?? (link.protocol === 'stp' ? 500_000n : 0n),
    });
  }

  get link(): LinkAddress {
    return this.options.link;
  }

  get source(): LinkSource {
    return this.options.source;
  }

  async start(): Promise<void> {
    if (this.options.control !== false) this.listenForControl();
    await this.options.source.start(this.publisher);
  }

  /** Stops reading, ends the session, and publishes what is buffered (until the deadline). */
  async stop(deadlineMs = 4000): Promise<void> {
    this.control?.unsubscribe();
    await this.options.source.stop();
    await this.publisher.close(deadlineMs);
  }

  private listenForControl(): void {
    const { bus, link, source } = this.options;
    this.control = bus.nc.subscribe(bus.names.ctlSubject(link.rig, link.link), {
      callback: (err, msg) => {
        if (err) return;
        const reply = (r: ControlReply) => msg.respond(JSON.stringify(r));
        let request: ControlRequest;
        try {
          request = msg.json<ControlRequest>();
        } catch {
          reply({ ok: false, written: 0, error: 'request is not JSON: send {"bytes": "<base64>"}' });
          return;
        }
        if (typeof request?.newSession === 'string') {
          const session = this.publisher.startNewSession(request.newSession.slice(0, 200));
          if (session) reply({ ok: true, written: 0, session });
          else reply({ ok: false, written: 0, error: 'the link has no open session (no target connected)' });
          return;
        }
        if (typeof request?.bytes !== 'string') {
          reply({ ok: false, written: 0, error: 'request has no "bytes" (base64 string)' });
          return;
        }
        const bytes = Buffer.from(request.bytes, 'base64');
        if (bytes.length === 0 || bytes.length > MAX_CONTROL_BYTES) {
          reply({ ok: false, written: 0, error: `bytes must be 1..${MAX_CONTROL_BYTES} long` });
          return;
        }
        source
          .write(bytes)
          .then((written) => reply({ ok: true, written, session: this.publisher.currentSession }))
          .catch((e: Error) => reply({ ok: false, written: 0, error: e.message }));
      },
    });
  }
}
