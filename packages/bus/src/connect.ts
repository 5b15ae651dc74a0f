import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type BusNames, busNames, redactUrl } from '@tracehub/contracts';

export interface BusOptions {
  /** Server URL(s), comma-separated: `nats://127.0.0.1:4222`. */
  url: string;
  /** Connection name shown by the server (`gateway/rig7/uart0`). */
  name: string;
  /** Prefix of every stream, subject and bucket name (tests, several installations on one server). */
  prefix?: string;
  /** How long the first connection may take, ms. */
  timeoutMs?: number;
}

/** One connection to NATS with its JetStream client and the names of this installation. */
export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly names: BusNames;
  isConnected(): boolean;
  /** Drains subscriptions and closes; safe to call twice. */
  close(): Promise<void>;
}

export class BusConnectError extends Error {
  override name = 'BusConnectError';
}

/**
 * Connects, failing fast with one clear message when the server cannot be reached; once
 * connected, the client reconnects forever (a server restart is a normal event here).
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  const servers = options.url.split(',').map((s) => s.trim());
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      name: options.name,
      timeout: options.timeoutMs ?? 5000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      reconnectJitter: 100,
      pingInterval: 10_000,
    });
  } catch (err) {
    throw new BusConnectError(
      `cannot connect to NATS at ${servers.map(redactUrl).join(',')}: ${describe(err)}; check NATS_URL and that nats-server is running with JetStream (-js)`,
    );
  }
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc, { timeout: options.timeoutMs ?? 5000 });
  } catch (err) {
    await nc.close().catch(() => {});
    throw new BusConnectError(
      `NATS at ${options.url} has no JetStream: ${describe(err)}; start nats-server with -js (JetStream enabled)`,
    );
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

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: string }).code;
    return code ? `${err.message} (${code})` : err.message;
  }
  return `${err}`;
}
