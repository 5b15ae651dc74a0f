import { type KV, Kvm } from '@nats-io/kv';
import type { Bus } from '@tracehub/bus';

/**
 * A lease on one link in the `th_leases` bucket, whose entries expire TTL after their last
 * write. Claiming is a create-if-absent write, so of two workers exactly one wins; the holder
 * refreshes it (a write that succeeds only at the revision it last saw); a worker that stops
 * refreshing loses it when the entry expires, and the next claim by another worker succeeds.
 */
export class LinkLease {
  private revision = 0;
  /** Until when (performance.now(), ms) the lease is certainly ours: TTL after the last write was sent. */
  private validUntil = 0;

  /**
   * `ttlMs`: the bucket's TTL (0: entries never expire, and `current()` trusts the last write).
   */
  constructor(
    private readonly kv: KV,
    readonly key: string,
    readonly owner: string,
    private readonly ttlMs = 0,
  ) {}

  static async openBucket(bus: Bus): Promise<KV> {
    return new Kvm(bus.js).open(bus.names.leaseBucket);
  }

  get held(): boolean {
    return this.revision > 0;
  }

  /** True when this worker now holds the lease. */
  async claim(): Promise<boolean> {
    const sent = performance.now();
    try {
      this.revision = await this.kv.create(this.key, this.owner);
      this.validUntil = sent + this.ttlMs;
      return true;
    } catch {
      this.revision = 0;
      return false;
    }
  }

  /** Extends the lease; false when it was lost (expired and claimed by someone else). */
  async refresh(): Promise<boolean> {
    if (!this.held) return false;
    const sent = performance.now();
    try {
      this.revision = await this.kv.update(this.key, this.owner, this.revision);
      this.validUntil = sent + this.ttlMs;
      return true;
    } catch {
      // The write may have landed with its answer lost (a cluster changing leader): only this
      // worker writes its own name, so a newer entry with it is our refresh.
      let entry: Awaited<ReturnType<KV['get']>>;
      try {
        entry = await this.kv.get(this.key);
      } catch {
        // Not known either way (NATS too busy or away to answer): not lost as far as anyone can
        // tell, and `current()` still bounds what this worker does under the write it knows.
        return true;
      }
      if (entry?.operation === 'PUT' && entry.string() === this.owner && entry.revision >= this.revision) {
        // Landed: good for TTL from when it was sent. Not landed: the older write still holds
        // the entry, for as long as it guaranteed.
        if (entry.revision > this.revision) this.validUntil = sent + this.ttlMs;
        this.revision = entry.revision;
        return true;
      }
      this.revision = 0;
      return false;
    }
  }

  /**
   * True while the lease is certainly ours for another `marginMs`: the entry cannot have
   * expired (the bucket counts its TTL from when it received the last write, after we sent
   * it), so no other worker can have claimed it. A worker decodes only while this holds, so
   * it stops before anyone else can start, even when its refreshes fail.
   */
  current(marginMs: number): boolean {
    if (!this.held) return false;
    return this.ttlMs === 0 || performance.now() < this.validUntil - marginMs;
  }

  /** Gives the lease up at once, so another worker need not wait for it to expire. */
  async release(): Promise<void> {
    if (!this.held) return;
    const revision = this.revision;
    this.revision = 0;
    await this.kv.delete(this.key, { previousSeq: revision }).catch(() => {});
  }

  /** Who holds the lease now, if anyone. */
  async holder(): Promise<string | undefined> {
    const entry = await this.kv.get(this.key);
    if (entry?.operation !== 'PUT') return undefined;
    return entry.string();
  }
}

/** Lease key of a link: `<protocol>.<rig>.<link>`. */
export function leaseKey(protocol: string, rig: string, link: string): string {
  return `${protocol}.${rig}.${link}`;
}
