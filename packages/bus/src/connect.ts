import { readFileSync } from 'node:fs';
import { type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { type ConnectionOptions, connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { busNames } from '@tracehub/contracts';
import { isJetStreamNotReady } from './errors.js';
import type { Bus } from './types.js';

export interface BusOptions {
  /**
   * Server URL(s), comma-separated: `nats://127.0.0.1:4222`. `nats://user:password@host`
   * logs in with that user, `nats://token@host` with that token; `tls://host` requires TLS.
   */
  url: string;
  /** A NATS credentials file (the user's JWT and nkey seed), for servers run in operator mode. */
  credsFile?: string;
  /** TLS: the CA that signed the server's certificate, and this client's own certificate and key (mutual TLS). */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /** Connection name shown by the server (`gateway/rig7/uart0`). */
  name: string;
  /** Prefix of every stream, subject and bucket name (tests, several installations on one server). */
  prefix?: string;
  /** How long the first connection may take, ms. */
  timeoutMs?: number;
  /** How long to wait for JetStream to answer (a cluster electing its leader), ms; default 30 000. */
  jetStreamReadyMs?: number;
}

export class BusConnectError extends Error {
  override name = 'BusConnectError';
}

/**
 * Connects, failing fast with one clear message when the server cannot be reached; once
 * connected, the client reconnects forever (a server restart is a normal event here).
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  const { servers, login } = serversAndLogin(options.url);
  const shownUrl = servers.join(',');
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      ...login,
      ...(options.credsFile ? { authenticator: credsAuthenticator(readFileSync(options.credsFile)) } : {}),
      // A tls:// URL asks for TLS even without files (the server's certificate checked against the system's CAs).
      ...(options.tls || servers.some((s) => s.startsWith('tls://')) ? { tls: options.tls ?? {} } : {}),
      name: options.name,
      timeout: options.timeoutMs ?? 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      reconnectJitter: 100,
      pingInterval: 10_000,
      // Every request (each JetStream publish is one) would otherwise build two Error objects
      // with stack traces up front, in case it fails: 14 % of a decoder's CPU and 9 % of a
      // gateway's with 32 links. A failure still says what failed.
      noAsyncTraces: true,
    });
  } catch (err) {
    throw new BusConnectError(
      `cannot connect to NATS at ${shownUrl}: ${describe(err)}${unansweredTlsHint(err, servers, options.tls)}; check NATS_URL (and NATS_CREDS, NATS_TLS_* where the server asks for them) and that nats-server is running with JetStream (-js)`,
    );
  }
  let jsm: JetStreamManager | undefined;
  // A JetStream cluster that is still starting has no leader and lets requests time out for a
  // few seconds: keep asking until `jetStreamReadyMs`; a server without JetStream says so at once.
  const readyBy = Date.now() + (options.jetStreamReadyMs ?? 30_000);
  while (!jsm) {
    try {
      jsm = await jetstreamManager(nc, { timeout: options.timeoutMs ?? 5000 });
    } catch (err) {
      if (isJetStreamNotReady(err) && Date.now() < readyBy) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      await nc.close().catch(() => {});
      throw new BusConnectError(
        `NATS at ${shownUrl} has no JetStream: ${describe(err)}; start nats-server with -js (JetStream enabled)`,
      );
    }
  }
  const js = jetstream(nc, { timeout: 10_000 });
  let closed = false;
  return {
    nc,
    js,
    jsm,
    names: busNames(options.prefix ?? ''),
    isConnected: () => !nc.isClosed() && !closed,
    close: async () => {
      if (closed) return;
      closed = true;
      await nc.drain().catch(() => nc.close());
    },
  };
}

/**
 * The server URLs without their credentials (fit for logs), and the login they carried:
 * the NATS client takes a user and password or a token as options, not from the URL.
 */
function serversAndLogin(url: string): {
  servers: string[];
  login: Pick<ConnectionOptions, 'user' | 'pass' | 'token'>;
} {
  const login: Pick<ConnectionOptions, 'user' | 'pass' | 'token'> = {};
  const servers = url
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((server) => {
      const at = /^([a-z]+:\/\/)([^@/]*)@(.*)$/i.exec(server);
      if (!at) return server;
      const [, scheme, userinfo, rest] = at;
      const colon = userinfo.indexOf(':');
      if (colon >= 0) {
        login.user = decodeURIComponent(userinfo.slice(0, colon));
        login.pass = decodeURIComponent(userinfo.slice(colon + 1));
      } else {
        login.token = decodeURIComponent(userinfo);
      }
      return `${scheme}${rest}`;
    });
  return { servers, login };
}

/**
 * A server that verifies client certificates (nats-server `tls { verify: true }`) drops a TLS
 * 1.3 client whose certificate it does not accept after the handshake, and the client sees only
 * its connect timeout: name the likely cause when a TLS connection timed out.
 */
function unansweredTlsHint(err: unknown, servers: string[], tls: BusOptions['tls']): string {
  const overTls = tls !== undefined || servers.some((s) => s.startsWith('tls://'));
  if (!overTls || !(err instanceof Error) || !/timeout/i.test(err.message)) return '';
  return tls?.certFile
    ? ' (over TLS: if the server verifies client certificates, it did not accept NATS_TLS_CERT; is it signed by a CA the server trusts?)'
    : ' (over TLS: if the server verifies client certificates, it dropped this client for having none; set NATS_TLS_CERT and NATS_TLS_KEY)';
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    return code ? `${err.message} (${code})` : err.message;
  }
  return `${err}`;
}
