import type { KV } from '@nats-io/kv';
import { DECODER_CHUNKS_IN_FLIGHT, ensureRecordConsumers, type LinkAddress, watchLinksStarted } from '@tracehub/bus';
import { bucketKeySubject, bucketStream, type Log, RepeatedErrorLog, silentLog } from '@tracehub/contracts';
import { CheckpointStore } from './checkpoints.js';
import { DecodeTurns } from './decode-turns.js';
import { fairShare } from './fair-share.js';
import { LinkLease, leaseKey } from './lease.js';
import { LinkDecoding } from './link-decoding.js';
import { WorkerMembership } from './membership.js';
import type { DecoderWorkerOptions } from './types.js';

/** Links claimed at the same time. */
const CLAIMS_AT_ONCE = 16;
/** How long a link idle and unleased still counts among the links the workers share, ms. */
const LINK_MEMORY_MS = 10 * 60_000;

/**
 * A decoder worker: finds links on the raw stream, leases some, decodes each leased link's
 * chunks in order and publishes their records (`LinkDecoding`), checkpointing each link a few
 * times a second. Several workers share the links; when one dies its leases expire and the
 * others resume from the checkpoints, so per link every chunk is decoded exactly once into
 * the output (re-publishes are de-duplicated).
 */
export class DecoderWorker {
  private readonly links = new Map<string, LinkDecoding>();
  /** Links of our protocols seen lately (waiting, leased or held), with when: the links shared out. */
  private readonly knownLinks = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private keepTimer: NodeJS.Timeout | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  /** Turns at decoding, shared by every link this worker holds (`DecodeTurns`). */
  private readonly turns = new DecodeTurns();
  /** The lease refresh running (`refreshLeases`), if any. */
  private refreshing: Promise<void> | undefined;
  private leaseKv!: KV;
  private checkpoints!: CheckpointStore;
  private membership!: WorkerMembership;
  private leaseTtlMs = 0;
  private running = false;
  private ticking: Promise<void> = Promise.resolve();
  /** Claims a tick started, still running (`claimAll`). */
  private claims: Promise<void> | undefined;
  /** A tick asked for by a link-started notice and not yet run. */
  private tickAsked = false;
  private startedWatch: { stop(): void } | undefined;
  private readonly log: Log;
  /** A tick fails every tick while NATS is away: logged once, then counted. */
  private readonly tickFailures: RepeatedErrorLog;
  /** A claimed link that cannot be opened (its stream or checkpoint away) fails every tick: the same, a link each. */
  private readonly openFailures = new Map<string, RepeatedErrorLog>();

  constructor(private readonly options: DecoderWorkerOptions) {
    this.log = options.log ?? silentLog;
    this.tickFailures = new RepeatedErrorLog(this.log, 'worker tick failed');
  }

  /** The last tick's view: workers of the group alive, links among them, and this worker's share. */
  share = { workers: 1, links: 0, share: 0 };

  /** Links this worker holds now. */
  heldLinks(): LinkAddress[] {
    return [...this.links.values()].map((l) => l.link);
  }

  /** Links whose records the record stream refuses now: each holds its chunk until it accepts. */
  heldBackLinks(): LinkAddress[] {
    return [...this.links.values()].filter((l) => l.holding).map((l) => l.link);
  }

  async start(): Promise<void> {
    // Storage's consumer must exist before a record is published: the stream keeps a
    // message only for the consumers that want it.
    await ensureRecordConsumers(this.options.bus);
    this.leaseKv = await LinkLease.openBucket(this.options.bus);
    this.leaseTtlMs = (await this.leaseKv.status()).ttl;
    this.checkpoints = await CheckpointStore.open(this.options.bus);
    this.membership = new WorkerMembership(
      this.leaseKv,
      this.options.bus.jsm,
      this.options.bus.names.leaseBucket,
      this.options.protocols,
      this.options.workerId,
    );
    this.running = true;
    // A link whose session starts is claimed at once, not at the next tick: its first
    // records come as soon as later ones do.
    this.startedWatch = watchLinksStarted(this.options.bus, this.options.protocols, (link) => {
      if (this.links.has(leaseKey(link.protocol, link.rig, link.link))) return;
      this.tickSoon();
    });
    await this.tick();
    const every = this.options.tickMs ?? 1000;
    this.timer = setInterval(() => this.tickSoon(), every);
    this.refreshTimer = setInterval(() => this.refreshLeases(), every);
    // Chunks held longer than a third of the ack wait (a publish held back, a chunk waiting
    // for an earlier one) are kept ours, so JetStream does not deliver them again meanwhile.
    const ackWait = this.options.ackWaitMs ?? 5000;
    this.keepTimer = setInterval(() => {
      for (const decoding of this.links.values()) decoding.keepHeld(ackWait / 3);
    }, ackWait / 3);
  }

  /** Runs a tick after the one running (if any); asks made meanwhile are one tick. */
  private tickSoon(): void {
    if (this.tickAsked) return;
    this.tickAsked = true;
    this.ticking = this.ticking
      .then(() => {
        this.tickAsked = false;
        return this.tick();
      })
      .then(
        () => this.tickFailures.succeeded(),
        (err) => this.tickFailures.failed(err),
      );
  }

  /** Stops consuming, waits for the chunks in flight, and releases every lease at once. */
  async stop(): Promise<void> {
    this.running = false;
    this.startedWatch?.stop();
    if (this.timer) clearInterval(this.timer);
    if (this.keepTimer) clearInterval(this.keepTimer);
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    await this.ticking.catch(() => {});
    await this.refreshing;
    await this.claims;
    await Promise.all([...this.links.values()].map((l) => l.close(true)));
    this.links.clear();
    await this.membership?.leave();
  }

  /**
   * Refreshes every lease held, at once (one round trip, not one a link), on its own timer:
   * not behind a tick, whose look for links waits on NATS. With 256 links on a saturated
   * machine, ticks ran late, leases were refreshed late, links stopped and were taken up
   * again (decoded again from their checkpoints), which made the machine busier still.
   */
  private refreshLeases(): void {
    if (this.refreshing || !this.running) return;
    const held = [...this.links.values()];
    this.refreshing = Promise.all(held.map((decoding) => decoding.lease.refresh()))
      .then(
        () => {},
        (err) => this.tickFailures.failed(err),
      )
      .finally(() => {
        this.refreshing = undefined;
      });
  }

  /**
   * Gives a held link back: out of the links the refreshes cover first, then after the refresh
   * in flight (if any), so that no refresh lands after the release and holds the entry until
   * its TTL (the next worker would wait for it).
   */
  private async giveBack(key: string, decoding: LinkDecoding): Promise<void> {
    this.links.delete(key);
    await this.refreshing;
    await decoding.close(true);
  }

  private async tick(): Promise<void> {
    if (!this.running) return;
    for (const [key, decoding] of this.links) {
      if (decoding.ended) {
        // Its consumer stopped under it: give the link back; the next tick claims it afresh.
        this.log.warn({ link: key }, 'link decoding ended; reopening');
        await this.giveBack(key, decoding);
      }
    }
    // A lease the refresh found lost means another worker owns the link now.
    for (const [key, decoding] of [...this.links]) {
      if (decoding.lease.held) continue;
      this.log.warn({ link: key }, 'lease lost; leaving the link to its new owner');
      this.links.delete(key);
      await decoding.close(false);
    }
    // Each worker takes its fair share of the links (`fairShare`: no two workers' shares
    // differ by more than one, ranks by member name). The links are those any worker holds, that have chunks waiting, or
    // were seen so lately (a link given back with nothing waiting is idle, not gone). A worker
    // over its share gives the excess back, so one that joins gets links within a tick or two;
    // one under it claims links nobody holds. A worker that leaves releases its leases; one
    // that dies lets them expire; either way the others' shares grow and they take the links.
    const group = await this.membership.heartbeat();
    const waiting = await this.discoverLinks();
    const now = Date.now();
    for (const link of [...waiting, ...(await this.leasedLinks())])
      this.knownLinks.set(leaseKey(link.protocol, link.rig, link.link), now);
    for (const key of this.links.keys()) this.knownLinks.set(key, now);
    for (const [key, seen] of this.knownLinks) if (now - seen > LINK_MEMORY_MS) this.knownLinks.delete(key);
    const links = this.knownLinks.size;
    const workers = group.workers;
    const share = fairShare(links, workers, group.rank);
    this.share = { workers, links, share };
    if (this.links.size > share) {
      for (const key of [...this.links.keys()].sort().slice(share)) {
        await this.giveBack(key, this.links.get(key)!);
        this.log.info({ link: key, workers, links, share }, 'link given back for a fair share');
      }
    }
    // Claims run a few at a time, each a few round trips (lease, checkpoint, consumer), and
    // beside the ticks, not in them: on a saturated decoder a claim took seconds, a tick that
    // waited for its claims refreshed its leases late and claimed some 16 links every few
    // seconds, and a fleet's last links (256 at once) were still unclaimed at the end of a
    // 30 s run. A tick starts claims when none are running.
    const unclaimed = waiting.filter((link) => !this.links.has(leaseKey(link.protocol, link.rig, link.link)));
    if (!this.claims && unclaimed.length > 0 && this.links.size < share) {
      this.claims = this.claimAll(unclaimed, share)
        .catch((err) => this.tickFailures.failed(err))
        .finally(() => {
          this.claims = undefined;
        });
    }
  }

  /** Claims `links`, `CLAIMS_AT_ONCE` at a time, while this worker holds fewer than `share`. */
  private async claimAll(links: LinkAddress[], share: number): Promise<void> {
    let claiming = 0;
    const next = async (): Promise<void> => {
      for (;;) {
        if (!this.running || this.links.size + claiming >= share) return;
        const link = links.shift();
        if (!link) return;
        if (this.links.has(leaseKey(link.protocol, link.rig, link.link))) continue;
        claiming++;
        try {
          await this.claim(link);
        } finally {
          claiming--;
        }
      }
    };
    await Promise.all(Array.from({ length: CLAIMS_AT_ONCE }, next));
  }

  /** Takes the link's lease and starts decoding it, unless another worker holds it. */
  private async claim(link: LinkAddress): Promise<void> {
    const key = leaseKey(link.protocol, link.rig, link.link);
    const lease = new LinkLease(this.leaseKv, key, this.options.workerId, this.leaseTtlMs);
    if (!(await lease.claim())) return;
    const decoding = new LinkDecoding(
      {
        ...this.options,
        checkpointMs: this.options.checkpointMs ?? 1000,
        maxInFlight: this.options.maxChunksInFlight ?? DECODER_CHUNKS_IN_FLIGHT,
        turns: this.turns,
      },
      this.checkpoints,
      link,
      lease,
      this.log,
      this.leaseTtlMs / 3,
    );
    try {
      await decoding.open();
      if (!this.running) {
        // Stopped while the claim was out: given back at once.
        await decoding.close(true);
        return;
      }
      this.links.set(key, decoding);
      this.log.info({ link: key }, 'link claimed');
      this.openFailures.get(key)?.succeeded();
      this.openFailures.delete(key);
    } catch (err) {
      let failures = this.openFailures.get(key);
      if (!failures) {
        failures = new RepeatedErrorLog(this.log, `opening claimed link ${key}`);
        this.openFailures.set(key, failures);
      }
      failures.failed(err);
      await decoding.close(true);
    }
  }

  /**
   * Links of our protocols with an entry in the lease bucket: held, or released less than a
   * TTL ago (read from the bucket's stream state in one request).
   */
  private async leasedLinks(): Promise<LinkAddress[]> {
    const { bus } = this.options;
    const bucket = bus.names.leaseBucket;
    const found: LinkAddress[] = [];
    for (const protocol of this.options.protocols) {
      const keys = bucketKeySubject(bucket, `${protocol}.`);
      const info = await bus.jsm.streams.info(bucketStream(bucket), { subjects_filter: `${keys}*.*` });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const [rig, link] = subject.slice(keys.length).split('.');
        if (rig && link) found.push({ protocol, rig, link });
      }
    }
    return found;
  }

  /** Every link that has raw chunks on the stream, for our protocols. */
  private async discoverLinks(): Promise<LinkAddress[]> {
    const { bus } = this.options;
    const found: LinkAddress[] = [];
    for (const protocol of this.options.protocols) {
      const info = await bus.jsm.streams.info(bus.names.rawStream, { subjects_filter: bus.names.rawFilter(protocol) });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const parsed = bus.names.parseSubject(subject);
        if (parsed?.kind === 'raw') found.push({ protocol: parsed.protocol, rig: parsed.rig, link: parsed.link });
      }
    }
    return found;
  }
}
