import type { KV } from '@nats-io/kv';

/**
 * The decoder workers alive now, as entries `members.<group>.<worker>` in the lease bucket:
 * each worker rewrites its own on every tick, and an entry the bucket's TTL expires is a
 * worker gone. Workers of the same protocols form a group; each takes its fair share of the
 * group's links.
 */
export class WorkerMembership {
  private readonly key: string;
  private readonly prefix: string;

  constructor(
    private readonly kv: KV,
    protocols: readonly string[],
    workerId: string,
  ) {
    this.prefix = `members.${[...protocols].sort().join('_')}`;
    this.key = `${this.prefix}.${keyToken(workerId)}`;
  }

  /** Says this worker is alive, and returns how many workers of its group are (itself included). */
  async heartbeat(): Promise<number> {
    await this.kv.put(this.key, '');
    let members = 0;
    for await (const _ of await this.kv.keys(`${this.prefix}.*`)) members++;
    return Math.max(1, members);
  }

  /** Leaves the group at once, so the others take this worker's share without waiting for the TTL. */
  async leave(): Promise<void> {
    await this.kv.delete(this.key).catch(() => {});
  }
}

/** A worker id as one KV key token (letters, digits, `-` and `_`). */
function keyToken(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '-');
}
