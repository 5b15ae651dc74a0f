import { type ConsumerMessages, DeliverPolicy } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/transport-node';
import { type Bus, ERRORS_HEADER, parseRecordBatch, RECORDS_HEADER } from '@tracehub/bus';
import type { RecordBatch, TraceRecord } from '@tracehub/contracts';
import type { RecordFilter } from '@tracehub/db';
import { matchesLive } from './live-filter.js';

/** Where a live client's messages go (an SSE response or a WebSocket). */
export interface LiveSink {
  /** Sends one message; false when the transport is backed up (wait for `whenWritable`). */
  send(event: 'records' | 'missed', data: string): boolean;
  whenWritable(resume: () => void): void;
  /** Ends the transport (the server is closing). */
  end(): void;
}

/** Largest number of records per message: enough to batch 5 000 records/s into few writes. */
const MAX_RECORDS_PER_MESSAGE = 500;

/**
 * One subscriber of the live tail: its filter, and a bounded queue between the bus and its
 * transport. When the transport cannot keep up the queue fills; past the limit the oldest
 * records are dropped and counted, and the client gets a `missed` message with the count
 * before the next records. The bus callback never waits for a client.
 */
export class LiveClient {
  private queue: TraceRecord[] = [];
  private head = 0;
  private blocked = false;
  private scheduled = false;
  private closed = false;
  /** Records dropped since the last `missed` message, and in all. */
  private missedPending = 0;
  missedTotal = 0;
  delivered = 0;

  constructor(
    readonly filter: RecordFilter,
    private readonly sink: LiveSink,
    private readonly queueLimit: number,
  ) {}

  get queued(): number {
    return this.queue.length - this.head;
  }

  offer(records: readonly TraceRecord[]): void {
    if (this.closed) return;
    for (const r of records) if (matchesLive(this.filter, r)) this.queue.push(r);
    const over = this.queued - this.queueLimit;
    if (over > 0) {
      this.head += over;
      this.missedPending += over;
      this.missedTotal += over;
    }
    if (this.head > 4096 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.schedule();
  }

  /** Stops delivery; with `endTransport`, also ends the connection. */
  close(endTransport = false): void {
    if (endTransport && !this.closed) this.sink.end();
    this.closed = true;
    this.queue = [];
    this.head = 0;
  }

  private schedule(): void {
    if (this.scheduled || this.blocked || this.closed || (this.queued === 0 && this.missedPending === 0)) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    while (!this.closed && !this.blocked) {
      let writable = true;
      if (this.missedPending > 0) {
        const missed = this.missedPending;
        this.missedPending = 0;
        writable = this.sink.send('missed', JSON.stringify({ missed, missedTotal: this.missedTotal }));
      } else if (this.queued > 0) {
        const end = Math.min(this.queue.length, this.head + MAX_RECORDS_PER_MESSAGE);
        const batch = this.queue.slice(this.head, end);
        this.head = end;
        if (this.head === this.queue.length) {
          this.queue = [];
          this.head = 0;
        }
        this.delivered += batch.length;
        writable = this.sink.send('records', JSON.stringify(batch));
      } else return;
      if (!writable) {
        this.blocked = true;
        this.sink.whenWritable(() => {
          this.blocked = false;
          this.schedule();
        });
      }
    }
  }
}

interface RateWindow {
  rig: string;
  link: string;
  protocol: string;
  /** Records per second over the last seconds, a ring of per-second counts. */
  buckets: Uint32Array;
  second: number;
  lastSeenMs: number;
  errors: number;
}

const RATE_SECONDS = 10;

/**
 * The api's view of the live records. Record rates per link (the fleet page) come from the
 * headers of every record message, read through a headers-only JetStream consumer: the api
 * never receives the records themselves just to count them. The records come through a
 * core-NATS subscription to `rec.>`, open only while at least one live client is connected;
 * each batch is then parsed once and offered to every client.
 */
export class LiveHub {
  private readonly clients = new Set<LiveClient>();
  private readonly rates = new Map<string, RateWindow>();
  private subscription: Subscription | undefined;
  /** True once the server has confirmed the subscription: records published from now on arrive. */
  private subscribed = false;
  private rateMessages: ConsumerMessages | undefined;
  private rateLoop: Promise<void> | undefined;
  private stopped = false;
  /** Record batches parsed for live clients. */
  batches = 0;

  constructor(
    private readonly bus: Bus,
    private readonly queueLimit: number,
    private readonly log: { warn(o: object, m: string): void } = { warn() {} },
  ) {}

  start(): void {
    this.rateLoop = this.countRates();
  }

  /** Reads the headers of every record message for the rates; retries while the stream is missing. */
  private async countRates(): Promise<void> {
    const { bus } = this;
    let failures = 0;
    while (!this.stopped) {
      try {
        const consumer = await bus.js.consumers.get(bus.names.recStream, {
          // One subject as a string: a list needs nats-server 2.10.
          filter_subjects: bus.names.recFilter(),
          headers_only: true,
          deliver_policy: DeliverPolicy.New,
        });
        this.rateMessages = await consumer.consume();
        if (this.stopped) await this.rateMessages.close();
        for await (const msg of this.rateMessages) {
          failures = 0;
          const where = bus.names.parseSubject(msg.subject);
          if (!where) continue;
          // A message without counts (another publisher) still says the link is alive.
          const records = Number(msg.headers?.get(RECORDS_HEADER)) || 0;
          const errors = Number(msg.headers?.get(ERRORS_HEADER)) || 0;
          this.count(where, records, errors);
        }
      } catch (err) {
        // The stream may not exist yet (a fresh installation): say so once, and look again.
        if (failures++ === 0) this.log.warn({ err: String(err) }, 'live record rates unavailable; retrying');
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** Resolves once the server has seen the records subscription (tests publish right after). */
  async flush(): Promise<void> {
    await this.bus.nc.flush();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.rateMessages?.close().catch(() => {});
    await this.rateLoop;
    this.closeSubscription();
    for (const c of this.clients) c.close(true);
    this.clients.clear();
  }

  private openSubscription(): void {
    if (this.subscription) return;
    const subscription = this.bus.nc.subscribe(this.bus.names.recFilter(), {
      callback: (err, msg) => {
        if (err) return;
        let batch: RecordBatch;
        try {
          batch = parseRecordBatch(msg.data);
        } catch {
          return; // not ours to judge: the decoders own the subject's contents
        }
        if (!Array.isArray(batch.records)) return;
        this.batches++;
        for (const client of this.clients) client.offer(batch.records);
      },
    });
    this.subscription = subscription;
    this.subscribed = false;
    this.bus.nc
      .flush()
      .then(() => {
        if (this.subscription === subscription) this.subscribed = true;
      })
      .catch(() => {});
  }

  private closeSubscription(): void {
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.subscribed = false;
  }

  connect(filter: RecordFilter, sink: LiveSink): LiveClient {
    const client = new LiveClient(filter, sink, this.queueLimit);
    this.clients.add(client);
    this.openSubscription();
    return client;
  }

  disconnect(client: LiveClient): void {
    client.close();
    this.clients.delete(client);
    if (this.clients.size === 0) this.closeSubscription();
  }

  /** Live clients connected, counted once the server has their records subscription. */
  get clientCount(): number {
    return this.subscribed ? this.clients.size : 0;
  }

  /** Live record rate (records/s over the last 10 s) and last-seen time of every link heard. */
  linkRates(nowMs = Date.now()): Array<{
    rig: string;
    link: string;
    protocol: string;
    recordsPerSecond: number;
    lastSeen: string;
    recentErrors: number;
  }> {
    const now = Math.floor(nowMs / 1000);
    return [...this.rates.values()].map((w) => {
      this.advance(w, now);
      let sum = 0;
      for (const n of w.buckets) sum += n;
      return {
        rig: w.rig,
        link: w.link,
        protocol: w.protocol,
        recordsPerSecond: sum / RATE_SECONDS,
        lastSeen: new Date(w.lastSeenMs).toISOString(),
        recentErrors: w.errors,
      };
    });
  }

  private count(batch: { rig: string; link: string; protocol: string }, records: number, errors: number): void {
    const key = `${batch.rig}/${batch.link}`;
    const nowMs = Date.now();
    let w = this.rates.get(key);
    if (!w) {
      w = {
        rig: batch.rig,
        link: batch.link,
        protocol: batch.protocol,
        buckets: new Uint32Array(RATE_SECONDS),
        second: Math.floor(nowMs / 1000),
        lastSeenMs: nowMs,
        errors: 0,
      };
      this.rates.set(key, w);
    }
    this.advance(w, Math.floor(nowMs / 1000));
    w.buckets[w.second % RATE_SECONDS] += records;
    w.lastSeenMs = nowMs;
    w.errors += errors;
  }

  private advance(w: RateWindow, now: number): void {
    if (now <= w.second) return;
    const steps = Math.min(now - w.second, RATE_SECONDS);
    for (let i = 1; i <= steps; i++) w.buckets[(w.second + i) % RATE_SECONDS] = 0;
    w.second = now;
  }
}
