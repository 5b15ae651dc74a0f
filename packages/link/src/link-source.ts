/** Where a link source delivers what it reads. */
export interface LinkSink {
  /** A connection to the target began: everything after it is a new link session. */
  connected(description: string): void;
  /** Bytes read from the link; the sink stamps their receive time. */
  data(bytes: Uint8Array): void;
  /** The connection ended: the session is over. */
  disconnected(reason: string): void;
  /**
   * For sources that can wait (files, stdin): resolves when the publisher has room again.
   * Live links never call it: they must never be blocked.
   */
  waitForRoom(): Promise<void>;
  /**
   * A connection the link did not take, or closed: a second target refused or replacing the
   * first, a connection closed for staying silent. Logged and counted by the sink.
   */
  connectionEvent?(event: ConnectionEvent, peer: string, why: string): void;
}

export type ConnectionEvent = 'refused' | 'replaced' | 'idle-closed';

/** The kinds of source, named as the schemes of link addresses. */
export type LinkSourceKind = 'serial' | 'tcp-listen' | 'tcp-connect' | 'udp' | 'file' | 'stdin';

/** tcp-listen: who may take the link (see `TcpListenOptions`). */
export interface LinkAdmission {
  secondTarget: 'replace' | 'refuse';
  idleTimeoutMs: number;
}

/** One physical link: serial port, TCP, UDP, file or stdin. */
export interface LinkSource {
  readonly kind: LinkSourceKind;
  /** What it reads from, for logs: `tcp-listen 0.0.0.0:6601`. */
  readonly description: string;
  /** Sources that listen (tcp-listen, udp): where, as configured, so a taken port is found before start. */
  readonly listensOn?: { host: string; port: number; transport: 'tcp' | 'udp' };
  /** Sources that targets connect to (tcp-listen): what a second target or a silent one meets. */
  readonly admission?: LinkAdmission;
  start(sink: LinkSink): Promise<void>;
  stop(): Promise<void>;
  /** Writes bytes to the target (the control direction); resolves to the count written. */
  write(bytes: Uint8Array): Promise<number>;
  /** Holds the line in break for `ms` (serial ports; others say it in band, see `UartUpload`). */
  sendBreak?(ms: number): Promise<void>;
  /** Sets the line's bit rate (serial ports). */
  setBitRate?(bitsPerSecond: number): Promise<void>;
  /** Set by sources that end by themselves (file, stdin): resolves when all was read. */
  readonly finished?: Promise<void>;
}

export class LinkWriteError extends Error {
  override name = 'LinkWriteError';
}
