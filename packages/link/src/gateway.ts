import { type Bus, type ControlServer, serveControl } from '@tracehub/bus';
import type { LinkAddress } from '@tracehub/contracts';
import { LinkPublisher, type LinkPublisherOptions } from './link-publisher.js';
import type { LinkSource } from './link-source.js';

export interface GatewayOptions extends Omit<LinkPublisherOptions, 'bus' | 'link'> {
  bus: Bus;
  link: LinkAddress;
  source: LinkSource;
  /** Answer control requests on `ctl.<rig>.<link>` (off for one-shot replays). */
  control?: boolean;
}

/**
 * One link's gateway: the source reads, the publisher turns reads into raw chunks on the bus,
 * and control requests write bytes back to the target.
 */
export class Gateway {
  readonly publisher: LinkPublisher;
  private control: ControlServer | undefined;

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
    this.control?.stop();
    await this.options.source.stop();
    await this.publisher.close(deadlineMs);
  }

  private listenForControl(): void {
    const { bus, link, source } = this.options;
    this.control = serveControl(bus, link, {
      write: async ({ bytes }) => ({ written: await source.write(bytes), session: this.publisher.currentSession }),
      newSession: async (reason) => {
        const session = this.publisher.startNewSession(reason.slice(0, 200));
        if (!session) throw new Error('the link has no open session (no target connected)');
        return session;
      },
    });
  }
}
