import { accessSync, constants, statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { TObject } from '@sinclair/typebox';
import type { ConfigProblem } from './config.js';

/**
 * Every file setting (see `fileSetting`) that names a file which is not there or cannot be
 * read: found before anything starts, not when a TLS handshake first needs the file.
 */
export function missingFileProblems(schema: TObject, config: Record<string, unknown>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [variable, property] of Object.entries(schema.properties)) {
    const path = config[variable];
    if (property.file !== true || typeof path !== 'string' || path === '') continue;
    const why = unreadableFile(path);
    if (why) problems.push({ variable, got: path, why, expected: 'the path of a readable file (empty: none)' });
  }
  return problems;
}

function unreadableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return 'not a file';
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'no such file';
    if (code === 'EACCES') return 'the file cannot be read (permissions)';
    return `the file cannot be read (${code ?? (error as Error).message})`;
  }
}

/**
 * A port setting whose port another process already listens on: tried by listening on it
 * for a moment, so the message names the setting rather than a crash naming EADDRINUSE.
 * Port 0 (any free port) always passes.
 */
export async function portInUseProblem(
  variable: string,
  port: number,
  host: string,
  transport: 'tcp' | 'udp' = 'tcp',
): Promise<ConfigProblem | undefined> {
  if (port === 0) return undefined;
  const code = transport === 'tcp' ? await tryListenTcp(port, host) : await tryBindUdp(port, host);
  if (code === undefined) return undefined;
  return portProblem(variable, String(port), port, host, code);
}

/** The problem for a port setting that could not be listened on (`code`: EADDRINUSE, EACCES, ...). */
export function portProblem(variable: string, got: string, port: number, host: string, code: string): ConfigProblem {
  const why =
    code === 'EADDRINUSE'
      ? `port ${port} on ${host} is already in use by another process`
      : code === 'EACCES'
        ? `port ${port} needs privileges this process does not have`
        : code === 'EADDRNOTAVAIL'
          ? `${host} is not an address of this machine`
          : `cannot listen on ${host}:${port} (${code})`;
  return { variable, got, why, expected: 'a free port (or 0 for any free port)' };
}

function tryListenTcp(port: number, host: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

async function tryBindUdp(port: number, host: string): Promise<string | undefined> {
  const { createSocket } = await import('node:dgram');
  return new Promise((resolve) => {
    const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', (error: NodeJS.ErrnoException) => {
      socket.close();
      resolve(error.code ?? 'error');
    });
    socket.bind({ port, address: host, exclusive: true }, () => socket.close(() => resolve(undefined)));
  });
}
