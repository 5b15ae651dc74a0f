import type { TraceRecord } from '@tracehub/contracts';
import {
  admitsLink,
  type MissedReason,
  Outlet,
  type OutletSink,
  type RecordFeed,
  type RecordMatch,
  recordMatcher,
} from '@tracehub/live';
import type { LinkRates } from './link-rates.js';

/** Where a live client's messages go (an SSE response or a WebSocket). */
export interface LiveSink extends OutletSink<TraceRecord[]> {
  /** Ends the transport (the server is closing). */
  end(): void;
}

/** What a `missed` message says about why. */
export const MISSED_REASONS: Record<MissedReason, string> = {
  slow: 'this client read slower than the records came',
  away: 'this client was not connected',
  unreceived: 'they did not reach this server live (it fell behind NATS or reconnected); they are stored',
};

/** The text of `missed` messages: this many records, so many in all, and why. */
export function missedMessages(): (records: number, reason: MissedReason) => string {
  let total = 0;
  return (records, reason) => {
    total += records;
    return JSON.stringify({ missed: records, missedTotal: total, reason: MISSED_REASONS[reason] });
  };
}

/** One live-tail client: its filter, its bounded outlet, its place in the feed. */
export interface LiveClient {
  readonly match: RecordMatch;
  readonly delivered: number;
  readonly missed: number;
  readonly queued: number;
}

/**
 * The live tail: each client reads the one {@link RecordFeed} through its own filter and
 * bounded outlet (`queueRecords`), so a client that stops reading loses its own oldest records,
 * is told how many, and holds up nothing else. Per-link record rates (the fleet page) come
 * from {@link LinkRates}, which never receives the records themselves.
 */
export class LiveHub {
  private readonly clients = new Map<LiveClient, (endTransport: boolean) => void>();
  /** Clients that have left, in all. */
  departed = 0;
  /** Each client's outlet, while it is connected: what the live tail holds for readers. */
  private readonly outlets = new Map<LiveClient, Outlet<TraceRecord[]>>();

  constructor(
    readonly feed: RecordFeed,
    readonly rates: LinkRates,
    private readonly queueRecords: number,
  ) {}

  connect(match: RecordMatch, sink: LiveSink): LiveClient {
    const outlet = new Outlet<TraceRecord[]>({ records: this.queueRecords });
    const matches = recordMatcher(match);
    const reader = outlet.reader(sink);
    const removeFromFeed = this.feed.add(
      (batch) => {
        if (!admitsLink(match, batch)) return;
        const records = batch.records.filter(matches);
        if (records.length > 0) outlet.push(records, records.length);
      },
      // Records of its links that never arrived: told, with how many (at most: its filter may not have taken them all).
      (gap) => {
        if (admitsLink(match, gap) && (match.sessions === undefined || match.sessions.includes(gap.session)))
          outlet.pushUnreceived(gap.records);
      },
    );
    const client: LiveClient = {
      match,
      get delivered() {
        return reader.delivered;
      },
      get missed() {
        return reader.missed;
      },
      get queued() {
        return reader.queued;
      },
    };
    this.outlets.set(client, outlet);
    this.clients.set(client, (endTransport) => {
      if (endTransport) sink.end();
      removeFromFeed();
      reader.close();
      outlet.clear();
    });
    return client;
  }

  disconnect(client: LiveClient, endTransport = false): void {
    const close = this.clients.get(client);
    if (this.clients.delete(client)) this.departed++;
    this.outlets.delete(client);
    close?.(endTransport);
  }

  /** Live clients connected, counted once the server has the records subscription. */
  get clientCount(): number {
    return this.feed.subscribed ? this.clients.size : 0;
  }

  /** Records the clients' outlets hold (read or not yet): 0 once every client has gone. */
  get heldRecords(): number {
    let held = 0;
    for (const outlet of this.outlets.values()) held += outlet.heldRecordCount;
    return held;
  }

  /** Outlets the live tail keeps: one per connected client. */
  get outletCount(): number {
    return this.outlets.size;
  }

  /** Record batches parsed for live readers (the tail and the PalmTrace bridge). */
  get batches(): number {
    return this.feed.batches;
  }

  linkRates(nowMs = Date.now()) {
    return this.rates.linkRates(nowMs);
  }

  stop(): void {
    for (const client of [...this.clients.keys()]) this.disconnect(client, true);
  }
}
