import type { CommandSizes, QsCommand, QsCommandRequest } from './commands.js';
import { type FrontEndEvent, QspyFrontEnd } from './front-end.js';
import { type CommandResult, QsLinkControl } from './link-control.js';
import { QsTargetLink } from './target-link.js';
import { FrontEndPort, parseFrontEndAddress } from './udp-port.js';

/** The front-end options of a link address: `?frontend=:7701&frontend-idle=30`. */
export interface FrontEndOption {
  host: string;
  port: number;
  /** Seconds of silence after which another front-end's ATTACH takes the port (0: never, as qspy). */
  idleSeconds: number;
}

/**
 * Takes the front-end options out of a link address, leaving the rest for the link source:
 * `tcp-listen::6601?frontend=:7701` -> `tcp-listen::6601` and port 7701 on all interfaces.
 */
export function takeFrontEndOption(address: string): { address: string; frontEnd?: FrontEndOption } {
  const q = address.indexOf('?');
  if (q < 0) return { address };
  const params = new URLSearchParams(address.slice(q + 1));
  const frontEnd = params.get('frontend');
  const idle = params.get('frontend-idle');
  if (frontEnd === null) {
    if (idle !== null) throw new Error(`link address '${address}': frontend-idle needs frontend=[HOST]:PORT`);
    return { address };
  }
  params.delete('frontend');
  params.delete('frontend-idle');
  const idleSeconds = idle === null ? 0 : Number(idle);
  if (!Number.isFinite(idleSeconds) || idleSeconds < 0) {
    throw new Error(`link address '${address}': frontend-idle is seconds (0: the port stays held, as in qspy)`);
  }
  const rest = params.toString();
  return {
    address: address.slice(0, q) + (rest ? `?${rest}` : ''),
    frontEnd: { ...parseFrontEndAddress(frontEnd), idleSeconds },
  };
}

export interface QsLinkPointOptions {
  /** Writes a QS-RX frame to the target; must not block the caller. */
  write(frame: Uint8Array): void;
  /** Open a qspy-compatible front-end port for the link. */
  frontEnd?: FrontEndOption;
  onFrontEndEvent?(event: FrontEndEvent): void;
}

/** What the control API shows about a link's QS side. */
export interface QsLinkPointStatus {
  targetConnected: boolean;
  target: { version: number; objPtrSize: number; funPtrSize: number; sigSize: number; fromTarget: boolean };
  dictionaries: ReturnType<QsTargetLink['names']['sizes']>;
  /** The dictionaries' names, offered where a person types an object, signal, function or command. */
  names: ReturnType<QsTargetLink['names']['names']>;
  /** The front-end port, if the link has one. */
  frontEnd: ReturnType<FrontEndPort['status']> | null;
}

/**
 * Where a QS link's bytes and its control meet, in the process that owns the link: the
 * target side (`QsTargetLink`) fed with every byte read, tracehub's commands with their
 * answers (`QsLinkControl`), and the optional front-end port for QUTest and QView. Feeding it
 * costs a decode of the link's bytes; sending to a front-end never waits.
 */
export class QsLinkPoint {
  readonly target: QsTargetLink;
  readonly control: QsLinkControl;
  readonly port: FrontEndPort | undefined;

  constructor(options: QsLinkPointOptions) {
    this.target = new QsTargetLink({ write: options.write });
    this.control = new QsLinkControl(this.target);
    if (options.frontEnd) {
      const { host, port, idleSeconds } = options.frontEnd;
      let socket: FrontEndPort | undefined;
      const frontEnd = new QspyFrontEnd({
        target: this.target,
        send: (d, to) => socket?.send(d, to),
        onEvent: options.onFrontEndEvent,
        idleTakeoverMs: idleSeconds * 1000,
      });
      socket = new FrontEndPort({ host, port, frontEnd });
      this.port = socket;
    }
  }

  async start(): Promise<void> {
    await this.port?.start();
  }

  /** Sends DETACH to an attached front-end and closes the port. */
  async stop(): Promise<void> {
    await this.port?.stop();
  }

  connected(): void {
    this.control.targetChanged();
    this.target.targetConnected();
  }

  data(bytes: Uint8Array): void {
    this.target.data(bytes);
  }

  disconnected(): void {
    this.target.targetDisconnected();
    this.control.targetChanged();
  }

  execute(
    command: QsCommand | QsCommandRequest,
    options: { timeoutMs: number; sizes?: Partial<CommandSizes> },
  ): Promise<CommandResult> {
    return this.control.execute(command, options);
  }

  /** Frees the front-end port from its holder (who gets DETACH). */
  releaseFrontEnd(): boolean {
    const held = this.port?.status().peer != null;
    this.port?.release();
    return held;
  }

  status(): QsLinkPointStatus {
    const c = this.target.config;
    return {
      targetConnected: this.target.connected,
      target: {
        version: c.version,
        objPtrSize: c.objPtrSize,
        funPtrSize: c.funPtrSize,
        sigSize: c.sigSize,
        fromTarget: c.fromTarget,
      },
      dictionaries: this.target.names.sizes(),
      names: this.target.names.names(),
      frontEnd: this.port ? this.port.status() : null,
    };
  }
}
