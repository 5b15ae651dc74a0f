import { type ConsumerMessages, DeliverPolicy } from '@nats-io/jetstream';
import { type Bus, ERRORS_HEADER, RECORDS_HEADER } from '@tracehub/bus';
import { type Log, silentLog } from '@tracehub/contracts';

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

export interface LinkRate {
  rig: string;
  link: string;
  protocol: string;
  recordsPerSecond: number;
  lastSeen: string;
  recentErrors: number;
}

/**
 * Record rates per link (the fleet page), from the headers of every record message read
 * through a headers-only JetStream consumer: the api never receives records just to count them.
 */
export class LinkRates {
  private readonly rates = new Map<string, RateWindow>();
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly bus: Bus,
    private readonly log: Log = silentLog,
  ) {}

  start(): void {
    this.loop = this.countRates();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close().catch(() => {});
    await this.loop;
  }

  /** Reads the headers of every record message; retries while the stream is missing. */
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
        this.messages = await consumer.consume();
        if (this.stopped) await this.messages.close();
        for await (const msg of this.messages) {
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
        if (failures++ === 0) this.log.warn({ err }, 'live record rates unavailable; retrying');
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** Live record rate (records/s over the last 10 s) and last-seen time of every link heard. */
  linkRates(nowMs = Date.now()): LinkRate[] {
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
