import type { LinkSource } from './link-source.js';
import { FileSource, type FileSourceOptions, type ReplayPace } from './sources/file.js';
import { SerialSource } from './sources/serial.js';
import { StdinSource } from './sources/stdin.js';
import { TcpConnectSource } from './sources/tcp-connect.js';
import { TcpListenSource } from './sources/tcp-listen.js';
import { UdpSource } from './sources/udp.js';

/** The port QP/Spy targets connect to (qspy's default). */
export const QSPY_PORT = 6601;

export const LINK_ADDRESS_FORMS = [
  'serial:/dev/ttyX?baud=115200',
  'tcp-listen:HOST:PORT?secondTarget=replace|refuse&idleTimeoutMs=30000 (default port 6601)',
  'tcp-connect:HOST:PORT',
  'udp:HOST:PORT',
  'file:PATH?pace=max|original&bps=115200',
  '- (standard input)',
];

export class LinkAddressError extends Error {
  override name = 'LinkAddressError';
  constructor(address: string, why: string) {
    super(`bad link address '${address}': ${why}; use one of: ${LINK_ADDRESS_FORMS.join(', ')}`);
  }
}

/** Builds the link source a link address names. */
export function createLinkSource(address: string, fileOptions: Partial<FileSourceOptions> = {}): LinkSource {
  if (address === '-') return new StdinSource();
  const colon = address.indexOf(':');
  if (colon < 0) throw new LinkAddressError(address, 'no scheme');
  const scheme = address.slice(0, colon);
  const rest = address.slice(colon + 1);
  switch (scheme) {
    case 'serial': {
      const [path, query = ''] = rest.split('?');
      if (!path) throw new LinkAddressError(address, 'no device path');
      const baud = Number(new URLSearchParams(query).get('baud') ?? 115200);
      if (!Number.isInteger(baud) || baud <= 0) throw new LinkAddressError(address, 'baud must be a positive integer');
      return new SerialSource(path, baud);
    }
    case 'tcp-listen': {
      const [hostAndPort, query = ''] = rest.split('?');
      const { host, port } = hostPort(address, hostAndPort, '0.0.0.0', QSPY_PORT);
      const params = new URLSearchParams(query);
      const secondTarget = params.get('secondTarget') ?? 'replace';
      if (secondTarget !== 'replace' && secondTarget !== 'refuse') {
        throw new LinkAddressError(address, "secondTarget must be 'replace' or 'refuse'");
      }
      const idleTimeoutMs = Number(params.get('idleTimeoutMs') ?? 30_000);
      if (!Number.isInteger(idleTimeoutMs) || idleTimeoutMs < 0) {
        throw new LinkAddressError(address, 'idleTimeoutMs must be a whole number of ms (0: no timeout)');
      }
      params.delete('secondTarget');
      params.delete('idleTimeoutMs');
      if ([...params.keys()].length > 0) {
        throw new LinkAddressError(address, `unknown parameter '${[...params.keys()][0]}' (not a link setting)`);
      }
      return new TcpListenSource(host, port, { secondTarget, idleTimeoutMs });
    }
    case 'tcp-connect': {
      const { host, port } = hostPort(address, rest, undefined, undefined);
      return new TcpConnectSource(host, port);
    }
    case 'udp': {
      const { host, port } = hostPort(address, rest, '0.0.0.0', undefined);
      return new UdpSource(host, port);
    }
    case 'file': {
      const [path, query = ''] = rest.split('?');
      if (!path) throw new LinkAddressError(address, 'no file path');
      const params = new URLSearchParams(query);
      const pace = (params.get('pace') ?? fileOptions.pace ?? 'max') as ReplayPace;
      if (pace !== 'max' && pace !== 'original')
        throw new LinkAddressError(address, "pace must be 'max' or 'original'");
      const bps = Number(params.get('bps') ?? fileOptions.bitsPerSecond ?? 115200);
      if (!Number.isFinite(bps) || bps <= 0) throw new LinkAddressError(address, 'bps must be a positive number');
      return new FileSource(path, {
        pace,
        bitsPerSecond: bps,
        readBytes: fileOptions.readBytes ?? 16 * 1024,
        onProgress: fileOptions.onProgress,
      });
    }
    default:
      throw new LinkAddressError(address, `unknown scheme '${scheme}'`);
  }
}

function hostPort(
  address: string,
  rest: string,
  defaultHost: string | undefined,
  defaultPort: number | undefined,
): { host: string; port: number } {
  // HOST:PORT, :PORT, PORT, HOST, or [v6]:PORT
  if (rest.includes('?')) {
    throw new LinkAddressError(
      address,
      `unknown parameter '${rest.slice(rest.indexOf('?') + 1)}' (not a link setting)`,
    );
  }
  let host: string | undefined;
  let portText: string | undefined;
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(rest);
  if (v6) {
    host = v6[1];
    portText = v6[2];
  } else if (/^\d+$/.test(rest)) {
    portText = rest;
  } else {
    const i = rest.lastIndexOf(':');
    host = i < 0 ? rest : rest.slice(0, i);
    portText = i < 0 ? undefined : rest.slice(i + 1);
  }
  host = host || defaultHost;
  const port = portText ? Number(portText) : defaultPort;
  if (!host) throw new LinkAddressError(address, 'no host');
  // A host name or address has none of these: the text is something else (two links run together).
  if (/[\s,;/=?]/.test(host)) throw new LinkAddressError(address, `'${host}' is not a host name or address`);
  if (port === undefined || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new LinkAddressError(address, 'port must be 0..65535');
  }
  return { host, port };
}
