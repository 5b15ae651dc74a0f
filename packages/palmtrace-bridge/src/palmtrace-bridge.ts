import type { Log } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import {
  claimReporterEndpoints,
  deleteReporterEndpoint,
  heartbeatApiReplica,
  insertReporterEndpoint,
  listReporterEndpoints,
  type ReporterEndpointRow,
  releaseReporterEndpoints,
  removeApiReplica,
  renewReporterLeases,
  type SharedReporterEndpoint,
  upsertConfiguredReporterEndpoints,
} from '@tracehub/db';
import type { RecordFeed } from '@tracehub/live';
import type { Kysely } from 'kysely';
import type { PalmTraceBridgeSettings } from './bridge-settings.js';
import type { ReporterEndpointInput } from './endpoint-schema.js';
import { LinkPalmIdsCache } from './link-palm-ids.js';
import { type ListenerLoad, type ListenerStatus, PalmTraceListener } from './palmtrace-listener.js';
import { type CarriedStatus, ReporterEndpoint, type ReporterStatus } from './reporter-endpoint.js';

export class ReporterExistsError extends Error {
  override name = 'ReporterExistsError';
}

/** An endpoint's status as any API process answers it: who serves it, and since when the status is. */
export interface SharedReporterStatus extends ReporterStatus {
  /** The API process serving it now (null: none yet, or its process died and none took it over). */
  servedBy: string | null;
  /** When its status was written (null: not yet). */
  statusAt: string | null;
}

/**
 * The Reporter endpoints of every API process, and this process's listening port.
 *
 * Endpoints live in Postgres (`reporter_endpoints`), not in a process: any API process adds,
 * removes and lists them, and each is served by exactly one process, the one holding its
 * lease. Every tick a process renews its leases and writes its endpoints' statuses; when it
 * cannot renew them in time it stops serving them, before the lease can run out and another
 * process take them. Endpoints nobody serves (new from configuration, given back by a process
 * that stopped, or left by one that died) are shared out: a process takes them up to its
 * share of all endpoints over the processes alive. An endpoint stays where it is while its
 * process lives (moving one costs its Reporter a reconnect).
 */
export class PalmTraceBridge {
  /** The endpoints this process serves. */
  private readonly served = new Map<string, ReporterEndpoint>();
  private listener: PalmTraceListener | null = null;
  private readonly linkIds: LinkPalmIdsCache;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  /** Until when (performance.now(), ms) the leases of `served` are certainly this process's. */
  private validUntil = 0;
  /** Renewals failed in a row (Postgres away): logged once, and once more when they succeed again. */
  private renewFailures = 0;
  private running = false;

  constructor(
    private readonly deps: {
      db: Kysely<Database>;
      feed: RecordFeed;
      settings: PalmTraceBridgeSettings;
      log: Log;
      /** This process's name in leases (unique per process). */
      replicaId: string;
    },
  ) {
    this.linkIds = new LinkPalmIdsCache(deps.db, deps.log, deps.settings.linkSettingsRefreshMs);
  }

  get replicaId(): string {
    return this.deps.replicaId;
  }

  private get leaseMs(): number {
    return this.deps.settings.leaseMs;
  }

  async start(): Promise<void> {
    const { settings, db } = this.deps;
    await this.linkIds.start();
    await upsertConfiguredReporterEndpoints(
      db,
      settings.reporters.map((input, i) => {
        const id = input.id ?? `config${i + 1}`;
        return { id, config: { ...input, id } };
      }),
    );
    if (settings.listenPort !== undefined) {
      this.listener = new PalmTraceListener(
        this.deps.feed,
        settings.listenOptions,
        { records: settings.queueRecords, bytes: settings.queueBytes },
        this.deps.log,
        this.linkIds.of,
      );
      await this.listener.listen(settings.listenPort, settings.listenHost);
    }
    this.running = true;
    await this.tick();
    const every = Math.max(50, Math.floor(this.leaseMs / 5));
    this.timer = setInterval(() => {
      this.ticking = this.ticking.then(() => this.tick());
    }, every);
    await this.deps.feed.flush();
  }

  /** Stops serving, gives the leases back (another process takes the endpoints at once). */
  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.linkIds.stop();
    await this.ticking;
    await Promise.all([...this.served.values()].map((e) => e.stop()));
    this.served.clear();
    await releaseReporterEndpoints(this.deps.db, this.replicaId).catch(() => {});
    await removeApiReplica(this.deps.db, this.replicaId).catch(() => {});
    await this.listener?.close();
    this.listener = null;
  }

  /** Renews, drops what is no longer ours, takes our share of the endpoints nobody serves. */
  private async tick(): Promise<void> {
    if (!this.running) return;
    const { db, log } = this.deps;
    const sent = performance.now();
    try {
      const { replicas, endpoints } = await heartbeatApiReplica(db, this.replicaId, this.leaseMs);
      const mine = new Set(await renewReporterLeases(db, this.replicaId, this.leaseMs, this.statusesServed()));
      this.validUntil = sent + this.leaseMs;
      for (const [id, endpoint] of this.served) {
        if (mine.has(id)) continue;
        this.served.delete(id);
        await endpoint.stop();
        log.info({ reporter: id }, 'Reporter endpoint removed, or served by another process now; stopped here');
      }
      const share = Math.ceil(endpoints / replicas);
      for (const row of await claimReporterEndpoints(db, this.replicaId, this.leaseMs, share - this.served.size)) {
        this.serve(row);
        log.info({ reporter: row.id, replicas, endpoints }, 'Reporter endpoint taken over');
      }
      if (this.renewFailures > 0) log.info({ failures: this.renewFailures }, 'Reporter endpoint leases renewed again');
      this.renewFailures = 0;
    } catch (err) {
      // Once per outage (Postgres away for minutes would otherwise log every tick).
      if (this.renewFailures++ === 0) log.warn({ err }, 'could not renew the Reporter endpoint leases; will try again');
    }
    // Not renewed for most of a lease: another process may take the endpoints soon. Stop
    // first, so that no Reporter is ever fed by two processes.
    if (performance.now() > this.validUntil - this.leaseMs / 5 && this.served.size > 0) {
      log.warn({ reporters: [...this.served.keys()] }, 'leases not renewed in time; leaving the endpoints to others');
      await Promise.all([...this.served.values()].map((e) => e.stop()));
      this.served.clear();
    }
  }

  private statusesServed(): Record<string, Record<string, unknown>> {
    const statuses: Record<string, Record<string, unknown>> = {};
    for (const [id, endpoint] of this.served) statuses[id] = { ...endpoint.status() };
    return statuses;
  }

  /** Starts serving an endpoint this process now holds (going on from its stored status). */
  private serve(row: ReporterEndpointRow): ReporterEndpoint {
    const { settings } = this.deps;
    const endpoint = new ReporterEndpoint(
      row.id,
      row.source,
      row.config as ReporterEndpointInput,
      {
        db: this.deps.db,
        feed: this.deps.feed,
        log: this.deps.log,
        linkIds: this.linkIds.of,
        retryMs: settings.retryMs,
        queueRecords: settings.queueRecords,
        queueBytes: settings.queueBytes,
      },
      carriedFrom(row.status),
    );
    this.served.set(row.id, endpoint);
    endpoint.start();
    return endpoint;
  }

  /** Adds an endpoint served by this process; ReporterExistsError when the id is taken. */
  async add(input: ReporterEndpointInput): Promise<SharedReporterStatus> {
    const { db } = this.deps;
    const base = { source: 'api' as const, owner: this.replicaId, leaseMs: this.leaseMs };
    let id = input.id;
    if (id !== undefined) {
      if (!(await insertReporterEndpoint(db, { ...base, id, config: { ...input, id } }))) {
        throw new ReporterExistsError(`a Reporter endpoint named ${JSON.stringify(id)} exists already`);
      }
    } else {
      // The first free r<n>, taken by the insert itself (two processes never get the same one).
      const taken = new Set((await listReporterEndpoints(db)).map((r) => r.id));
      for (let n = 1; ; n++) {
        const candidate = `r${n}`;
        if (taken.has(candidate)) continue;
        if (await insertReporterEndpoint(db, { ...base, id: candidate, config: { ...input, id: candidate } })) {
          id = candidate;
          break;
        }
      }
    }
    const [row] = await listReporterEndpoints(db, id);
    const endpoint = this.serve(row);
    const status = endpoint.status();
    await renewReporterLeases(db, this.replicaId, this.leaseMs, { [id]: { ...status } });
    return { ...status, servedBy: this.replicaId, statusAt: new Date().toISOString() };
  }

  /** Removes an endpoint; false when there is none of that name. Whoever serves it stops within a tick. */
  async remove(id: string): Promise<boolean> {
    if (!(await deleteReporterEndpoint(this.deps.db, id))) return false;
    const endpoint = this.served.get(id);
    if (endpoint) {
      this.served.delete(id);
      await endpoint.stop();
    }
    return true;
  }

  async get(id: string): Promise<SharedReporterStatus | undefined> {
    const [row] = await listReporterEndpoints(this.deps.db, id);
    return row && this.statusOf(row);
  }

  async list(): Promise<SharedReporterStatus[]> {
    return (await listReporterEndpoints(this.deps.db)).map((row) => this.statusOf(row));
  }

  /** The endpoints this process serves, with their live status (metrics). */
  servedHere(): ReporterStatus[] {
    return [...this.served.values()].map((e) => e.status());
  }

  /** A stored endpoint's status: live when served here, else as its owner last wrote it. */
  private statusOf(row: SharedReporterEndpoint): SharedReporterStatus {
    const here = this.served.get(row.id);
    const status = here?.status() ?? (row.status as ReporterStatus | null) ?? initialStatus(row);
    return {
      ...status,
      servedBy: here ? this.replicaId : row.servedBy,
      statusAt: here ? new Date().toISOString() : (row.status_at?.toISOString() ?? null),
    };
  }

  /** The listening port's clients and the records held for them (metrics); null when it is off. */
  listenerLoad(): ListenerLoad | null {
    return this.listener?.load() ?? null;
  }

  listenerStatus(): ListenerStatus | null {
    return this.listener?.status() ?? null;
  }

  /** Resolves once records published from now on reach the endpoints (tests). */
  flush(): Promise<void> {
    return this.deps.feed.flush();
  }
}

/** The status of an endpoint no process has served yet. */
function initialStatus(row: ReporterEndpointRow): ReporterStatus {
  const config = row.config as ReporterEndpointInput;
  return {
    id: row.id,
    source: row.source,
    host: config.host,
    port: config.port,
    mode: config.replay ? 'replay' : 'live',
    connected: false,
    messagesSent: 0,
    bytesSent: 0,
    dropped: 0,
    reconnects: 0,
    queued: 0,
    bytesIgnored: 0,
    lastError: null,
    replay: config.replay ? { state: 'waiting', records: 0, error: null } : null,
    config,
  };
}

/** What a stored status carries over to the process that serves the endpoint next. */
function carriedFrom(stored: Record<string, unknown> | null): CarriedStatus | undefined {
  if (!stored) return undefined;
  const s = stored as unknown as ReporterStatus;
  return {
    messagesSent: s.messagesSent ?? 0,
    bytesSent: s.bytesSent ?? 0,
    dropped: s.dropped ?? 0,
    reconnects: s.reconnects ?? 0,
    bytesIgnored: s.bytesIgnored ?? 0,
    replay: s.replay ? { state: s.replay.state, records: s.replay.records } : null,
  };
}
