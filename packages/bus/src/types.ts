import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { BusNames } from '@tracehub/contracts';

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
