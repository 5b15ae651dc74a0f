import { type Bus, type ControlServer, serveControl } from '@tracehub/bus';
import type { LinkAddress, LinkConnectionState } from '@tracehub/contracts';
import { type FrontEndEvent, type FrontEndOption, QsLinkPoint } from '@tracehub/qspy-frontend';
import { frameSwdMessage, type StpDecoderOptions } from '@tracehub/stp';
import { LinkPublisher, type LinkPublisherOptions } from './link-publisher.js';
import type { LinkSink, LinkSource, LinkSourceKind } from './link-source.js';
import { UploadPoint } from './upload-point.js';

/** A serial line's idle time taken as a pause (STP v1): its reads follow the line closely. */
export const SERIAL_PAUSE_MARK_NS = 500_000n;

/**
 * A network-fed link's idle time taken as a pause (STP v1), 50 ms by default: longer than what
 * TCP delivery adds between reads of a steady stream (segments, a delayed ACK against Nagle
 * is 40 ms, a busy machine's scheduling), so delivery jitter is never taken for a pause.
 */
export const NETWORK_PAUSE_MARK_NS = 50_000_000n;

/**
 * What a live link means by a pause of its line (STP v1 resynchronises on pauses and ends a
 * message at one longer than its settings' maximum). A serial port's reads follow the line: an
 * idle time of 0.5 ms is a pause. A network-fed link (a trace box or terminal server in front
 * of the line) receives the line's bytes in segments whose timing is the network's and the
 * host's: only an idle time of at least `networkMarkNs` is a pause, shorter gaps between reads
 * are delivery jitter and not a pause at all. A target behind a network must pause at least
 * that long for its decoder to see it; the pause's length is then the measured idle time.
 */
export function pauseMarkOf(kind: LinkSourceKind, networkMarkNs = NETWORK_PAUSE_MARK_NS): bigint {
  if (kind === 'serial') return SERIAL_PAUSE_MARK_NS;
  if (kind === 'tcp-listen' || kind === 'tcp-connect' || kind === 'udp') return networkMarkNs;
  return 0n;
}

export interface GatewayOptions extends Omit<LinkPublisherOptions, 'bus' | 'link'> {
  /**
   * The shortest idle time of a network-fed STP link (tcp-listen, tcp-connect, udp) taken as a
   * pause of the line, ns (default `NETWORK_PAUSE_MARK_NS`): see `pauseMarkOf`.
   */
  networkPauseMarkNs?: bigint;
  bus: Bus;
  link: LinkAddress;
  source: LinkSource;
  /** Answer control requests on `ctl.<rig>.<link>` (off for one-shot replays). */
  control?: boolean;
  /** A qspy-compatible front-end port for QUTest and QView (QS links with control on). */
  frontEnd?: FrontEndOption;
  onFrontEndEvent?(event: FrontEndEvent): void;
}

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
  get qsPoint(): QsLinkPoint | undefined {
    if (!this.qsPointMade && this.makeQsPoint) {
      this.qsPointMade = this.makeQsPoint();
      if (this.targetConnected) this.qsPointMade.connected();
    }
    return this.qsPointMade;
  }
  /**
   * The QS control point is made when first needed (the link's first byte, a control request
   * that needs it, a front-end port to open): a link that only listens, or whose target is
   * connected but silent, holds no decoder state (docs/scaling.md, "An idle link").
   */
  private qsPointMade: QsLinkPoint | undefined;
  private readonly makeQsPoint: (() => QsLinkPoint) | undefined;
  /** Whether a target is connected now (a QS point made later is told so). */
  private targetConnected = false;
  /** The QS link's front-end port (`?frontend=`), if it has one: asking makes no QS point. */
  get frontEndPort() {
    return this.qsPointMade?.port;
  }
  /** An STP link's UART upload (control on): the device's answers decoded from every byte read, after the publisher. */
  readonly uploadPoint: UploadPoint | undefined;
  private control: ControlServer | undefined;

  constructor(private readonly options: GatewayOptions) {
    const { bus, link, source, control, frontEnd, onFrontEndEvent, ...publisherOptions } = options;
    if (link.protocol === 'qs' && control !== false) {
      this.makeQsPoint = () =>
        new QsLinkPoint({
          write: (frame) => {
            source.write(frame).catch((err: unknown) => publisherOptions.log?.warn({ err }, 'QS-RX frame not written'));
          },
          frontEnd,
          onFrontEndEvent,
        });
      // A front-end port listens from the start: QUTest and QView attach before the target talks.
      if (frontEnd) this.qsPointMade = this.makeQsPoint();
    } else if (frontEnd)
      throw new Error(`link ${link.rig}/${link.link}: a front-end port needs a QS link with control on`);
    if (link.protocol === 'stp' && control !== false)
      this.uploadPoint = new UploadPoint(source, uploadDecoderOptions(publisherOptions.settings ?? {}));
    // A source that ends by itself (a file, stdin) is a capture, not a target that reconnects;
    // its reads' timing is not the link's, so an STP capture has no pauses measured (STP v1
    // resynchronises on them): it decodes as `tracehub decode` decodes the file.
    const capture = source.finished !== undefined;
    const { networkPauseMarkNs, ...rest } = publisherOptions;
    this.publisher = new LinkPublisher({
      bus,
      link,
      ...rest,
      pauseMarkNs:
        rest.pauseMarkNs ?? (link.protocol === 'stp' && !capture ? pauseMarkOf(source.kind, networkPauseMarkNs) : 0n),
      noPauses: link.protocol === 'stp' && capture,
      captures: capture,
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
    await this.qsPointMade?.start();
    const tap = this.makeQsPoint ? this.qsTap() : this.uploadPoint;
    await this.options.source.start(tap ? teeSink(this.publisher, tap) : this.publisher);
  }

  /** How the link is connected: its source, the target the open session reads from, connections not taken. */
  connection(): LinkConnectionState {
    const { source } = this.options;
    const { refused, replaced, 'idle-closed': idleClosed } = this.publisher.stats.connections;
    return {
      source: { kind: source.kind, description: source.description, ...source.admission },
      target: this.publisher.target ?? null,
      notTaken: { refused, replaced, idleClosed },
    };
  }

  /** Stops reading, ends the session, and publishes what is buffered (until the deadline). */
  async stop(deadlineMs = 4000): Promise<void> {
    this.control?.stop();
    await this.qsPointMade?.stop();
    await this.options.source.stop();
    await this.publisher.close(deadlineMs);
  }

  /** The QS point's side of the link's reads: bytes make the point, connections are remembered until then. */
  private qsTap(): LinkTap {
    return {
      connected: () => {
        this.targetConnected = true;
        this.qsPointMade?.connected();
      },
      data: (bytes) => this.qsPoint!.data(bytes),
      disconnected: () => {
        this.targetConnected = false;
        this.qsPointMade?.disconnected();
      },
    };
  }

  /**
   * Answers `ctl.<rig>.<link>`: bytes to the target, new sessions, how the link is connected,
   * and the QS control point's requests.
   */
  private listenForControl(): void {
    const { bus, link, source } = this.options;
    const publisher = this.publisher;
    const hasPoint = this.makeQsPoint !== undefined;
    const point = () => this.qsPoint!;
    this.control = serveControl(
      bus,
      { rig: link.rig, link: link.link },
      {
        write: async ({ bytes }) => ({ written: await source.write(bytes), session: publisher.currentSession }),
        newSession: async (reason) => {
          const session = publisher.startNewSession(reason.slice(0, 200));
          if (!session) throw new Error('the link has no open session (no target connected)');
          return session;
        },
        connection: async () => ({ session: publisher.currentSession, connection: this.connection() }),
        ...(this.uploadPoint && {
          upload: async (data: Uint8Array) => {
            const result = await this.uploadPoint!.run(data);
            return {
              ok: result.ok,
              written: result.bytes,
              session: publisher.currentSession,
              result: { ...result },
              ...(result.ok ? {} : { error: result.error }),
            };
          },
        }),
        ...(link.protocol === 'swd' && {
          // SWD send (reference §3.2.5): the data framed (C0 … C1, escapes, END padding to words), no handshake.
          upload: async (data: Uint8Array) => {
            const started = performance.now();
            const written = await source.write(frameSwdMessage(data));
            return {
              ok: true,
              written,
              session: publisher.currentSession,
              result: {
                ok: true,
                outcome: 'uploaded',
                error: '',
                bitRate: null,
                setBitRate: null,
                bytes: data.length,
                ms: Math.round(performance.now() - started),
              },
            };
          },
        }),
        marker: async (marker) => {
          const session = publisher.mark(marker);
          if (!session) throw new Error('the link has no open session (no byte read since the target connected)');
          return session;
        },
        ...(hasPoint && {
          releaseFrontEnd: async () => {
            const released = point().releaseFrontEnd();
            return { session: publisher.currentSession, status: { ...point().status(), released } };
          },
          status: async () => ({ session: publisher.currentSession, status: { ...point().status() } }),
          qs: async ({ qs, answerTimeoutMs, sizes }) => {
            const result = await point().execute(qs, { timeoutMs: answerTimeoutMs, sizes });
            return {
              ok: result.ok,
              written: result.written,
              session: publisher.currentSession,
              result: { ...result },
              ...(result.error ? { error: result.error } : {}),
            };
          },
        }),
      },
    );
  }
}

/** What reads the link's bytes beside the publisher: the QS control point or an STP link's upload point. */
interface LinkTap {
  connected?(): void;
  data(bytes: Uint8Array): void;
  disconnected?(): void;
}

/** The publisher first (the link's bytes are never held up), then the tap. */
function teeSink(publisher: LinkPublisher, point: LinkTap): LinkSink {
  return {
    connected(description) {
      publisher.connected(description);
      point.connected?.();
    },
    data(bytes) {
      publisher.data(bytes);
      point.data(bytes);
    },
    disconnected(reason) {
      publisher.disconnected(reason);
      point.disconnected?.();
    },
    connectionEvent: (event, peer, why) => publisher.connectionEvent(event, peer, why),
    waitForRoom: () => publisher.waitForRoom(),
  };
}

/** The STP options the upload point decodes the device's answers with: the link's own from its address. */
function uploadDecoderOptions(settings: Record<string, unknown>): StpDecoderOptions {
  const options: StpDecoderOptions = {};
  if (settings.version === 1 || settings.version === 2) options.version = settings.version;
  if (Array.isArray(settings.littleEndianMasters))
    options.littleEndianMasters = settings.littleEndianMasters as number[];
  return options;
}
