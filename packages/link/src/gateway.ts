import type { Subscription } from '@nats-io/transport-node';
import type { Bus } from '@tracehub/bus';
import type { ControlReply, ControlRequest, LinkAddress } from '@tracehub/contracts';
import {
  CommandRejected,
  type FrontEndEvent,
  type FrontEndOption,
  type QsCommand,
  QsLinkPoint,
} from '@tracehub/qspy-frontend';
import { LinkPublisher, type LinkPublisherOptions } from './link-publisher.js';
import type { LinkSink, LinkSource } from './link-source.js';

export interface GatewayOptions extends Omit<LinkPublisherOptions, 'bus' | 'link'> {
  bus: Bus;
  link: LinkAddress;
  source: LinkSource;
  /** Answer control requests on `ctl.<rig>.<link>` (off for one-shot replays). */
  control?: boolean;
  /** A qspy-compatible front-end port for QUTest and QView (QS links with control on). */
  frontEnd?: FrontEndOption;
  onFrontEndEvent?(event: FrontEndEvent): void;
}

const MAX_CONTROL_BYTES = 64 * 1024;
const MAX_ANSWER_TIMEOUT_MS = 60_000;

/**
 * One link's gateway: the source reads, the publisher turns reads into raw chunks on the bus,
 * and control requests write bytes back to the target.
 */
export class Gateway {
  readonly publisher: LinkPublisher;
  /**
   * A QS link's control point (QS-RX commands answered from the link's own decoded records,
   * the front-end port): fed with every byte read, after the publisher.
   */
  readonly qsPoint: QsLinkPoint | undefined;
  private control: Subscription | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { bus, link, source, control, frontEnd, onFrontEndEvent, ...publisherOptions } = options;
    if (link.protocol === 'qs' && control !== false) {
      this.qsPoint = new QsLinkPoint({
        write: (frame) => {
          source
            .write(frame)
            .catch((e: Error) => publisherOptions.log?.warn({ err: e.message }, 'QS-RX frame not written'));
        },
        frontEnd,
        onFrontEndEvent,
      });
    } else if (frontEnd)
      throw new Error(`link ${link.rig}/${link.link}: a front-end port needs a QS link with control on`);
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
    const point = this.qsPoint;
    await point?.start();
    await this.options.source.start(point ? teeSink(this.publisher, point) : this.publisher);
  }

  /** Stops reading, ends the session, and publishes what is buffered (until the deadline). */
  async stop(deadlineMs = 4000): Promise<void> {
    this.control?.unsubscribe();
    await this.qsPoint?.stop();
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
        if (request?.qs !== undefined || request?.status === true || request?.releaseFrontEnd === true) {
          this.answerQs(request).then(reply);
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

  /** QS-RX commands with the target's answer, and the link's control state. */
  private async answerQs(request: ControlRequest): Promise<ControlReply> {
    const point = this.qsPoint;
    const session = this.publisher.currentSession;
    if (!point) return { ok: false, written: 0, error: 'this link has no QS control point (it is not a QS link)' };
    if (request.releaseFrontEnd === true) {
      const released = point.releaseFrontEnd();
      return { ok: true, written: 0, session, status: { ...point.status(), released } };
    }
    if (request.status === true) return { ok: true, written: 0, session, status: { ...point.status() } };
    const timeoutMs = Math.min(Math.max(Number(request.answerTimeoutMs ?? 1000) || 0, 0), MAX_ANSWER_TIMEOUT_MS);
    try {
      const result = await point.execute(request.qs as unknown as QsCommand, { timeoutMs, sizes: request.sizes });
      return {
        ok: result.ok,
        written: result.written,
        session,
        result: { ...result },
        ...(result.error ? { error: result.error } : {}),
      };
    } catch (e) {
      if (e instanceof CommandRejected) {
        return { ok: false, written: 0, session, error: e.message, ...(e.field ? { field: e.field } : {}) };
      }
      return { ok: false, written: 0, session, error: (e as Error).message };
    }
  }
}

/** The publisher first (the link's bytes are never held up), then the QS control point. */
function teeSink(publisher: LinkPublisher, point: QsLinkPoint): LinkSink {
  return {
    connected(description) {
      publisher.connected(description);
      point.connected();
    },
    data(bytes) {
      publisher.data(bytes);
      point.data(bytes);
    },
    disconnected(reason) {
      publisher.disconnected(reason);
      point.disconnected();
    },
    connectionEvent: (event, peer, why) => publisher.connectionEvent(event, peer, why),
    waitForRoom: () => publisher.waitForRoom(),
  };
}
