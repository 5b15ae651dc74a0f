import type { Database } from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import type { Kysely } from 'kysely';
import type { PalmTraceBridgeSettings } from './bridge-settings.js';
import type { ReporterEndpointInput } from './endpoint-schema.js';
import { type ListenerStatus, PalmTraceListener } from './palmtrace-listener.js';
import { type BridgeLog, ReporterEndpoint, type ReporterStatus } from './reporter-endpoint.js';

export class ReporterExistsError extends Error {
  override name = 'ReporterExistsError';
}

/**
 * The set of Reporter endpoints and the listening port: endpoints from configuration are
 * started with the bridge, others are added and removed at run time (the api's
 * `/reporters` routes). All of them read the api's one live record feed.
 */
export class PalmTraceBridge {
  private readonly endpoints = new Map<string, ReporterEndpoint>();
  private listener: PalmTraceListener | null = null;
  private nextNumber = 1;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      feed: RecordFeed;
      settings: PalmTraceBridgeSettings;
      log: BridgeLog;
    },
  ) {}

  private get feed(): RecordFeed {
    return this.deps.feed;
  }

  async start(): Promise<void> {
    const { settings } = this.deps;
    for (const input of settings.reporters) this.add(input, 'config');
    if (settings.listenPort !== undefined) {
      this.listener = new PalmTraceListener(
        this.feed,
        settings.listenOptions,
        { records: settings.queueRecords, bytes: settings.queueBytes },
        this.deps.log,
      );
      await this.listener.listen(settings.listenPort, settings.listenHost);
    }
    await this.feed.flush();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.endpoints.values()].map((e) => e.stop()));
    this.endpoints.clear();
    await this.listener?.close();
    this.listener = null;
  }

  add(input: ReporterEndpointInput, source: 'config' | 'api'): ReporterEndpoint {
    let id = input.id;
    if (id === undefined) {
      do id = `r${this.nextNumber++}`;
      while (this.endpoints.has(id));
    } else if (this.endpoints.has(id)) {
      throw new ReporterExistsError(`a Reporter endpoint named ${JSON.stringify(id)} exists already`);
    }
    const endpoint = new ReporterEndpoint(
      id,
      source,
      { ...input, id },
      {
        db: this.deps.db,
        feed: this.feed,
        log: this.deps.log,
        retryMs: this.deps.settings.retryMs,
        queueRecords: this.deps.settings.queueRecords,
        queueBytes: this.deps.settings.queueBytes,
      },
    );
    this.endpoints.set(id, endpoint);
    endpoint.start();
    return endpoint;
  }

  /** Stops and forgets an endpoint; false when there is none of that name. */
  async remove(id: string): Promise<boolean> {
    const endpoint = this.endpoints.get(id);
    if (!endpoint) return false;
    this.endpoints.delete(id);
    await endpoint.stop();
    return true;
  }

  get(id: string): ReporterStatus | undefined {
    return this.endpoints.get(id)?.status();
  }

  list(): ReporterStatus[] {
    return [...this.endpoints.values()].map((e) => e.status());
  }

  listenerStatus(): ListenerStatus | null {
    return this.listener?.status() ?? null;
  }

  /** Resolves once records published from now on reach the endpoints (tests). */
  flush(): Promise<void> {
    return this.feed.flush();
  }
}
