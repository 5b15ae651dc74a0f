import type { JetStreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import { bucketKeySubject, bucketStream } from '@tracehub/contracts';

/** This worker's place in its group: how many are alive, and its rank among them (0-based). */
export interface GroupView {
  workers: number;
  rank: number;
}

/**
 * The decoder workers alive now, as entries `members.<group>.<worker>` in the lease bucket:
 * each worker rewrites its own on every tick, and an entry the bucket's TTL expires is a
 * worker gone. Workers of the same protocols form a group and share its links out.
 *
 * The group is read from the bucket's stream state (one request, a consistent snapshot)
 * rather than by listing keys, which can miss a key that is being rewritten meanwhile. A
 * worker that left counts until its entry expires (the TTL), as one that died does.
 */
export class WorkerMembership {
  private readonly key: string;
  private readonly stream: string;
  private readonly groupFilter: string;
  private readonly subject: string;

  constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    bucket: string,
    protocols: readonly string[],
    workerId: string,
  ) {
    const group = `members.${[...protocols].sort().join('_')}`;
    this.key = `${group}.${keyToken(workerId)}`;
    this.stream = bucketStream(bucket);
    this.groupFilter = bucketKeySubject(bucket, `${group}.*`);
    this.subject = bucketKeySubject(bucket, this.key);
  }

  /** Says this worker is alive, and returns the group as it is now. */
  async heartbeat(): Promise<GroupView> {
    await this.kv.put(this.key, '');
    const info = await this.jsm.streams.info(this.stream, { subjects_filter: this.groupFilter });
    const members = Object.keys(info.state.subjects ?? {}).sort();
    const rank = members.indexOf(this.subject);
    return rank < 0 ? { workers: members.length + 1, rank: members.length } : { workers: members.length, rank };
  }

  /**
   * Leaves the group at once. The entry's subject is purged from the bucket's stream: a KV
   * delete would leave a delete mark under it, and the group (read from the stream's subjects)
   * would count this worker until the TTL expired the mark.
   */
  async leave(): Promise<void> {
    await this.jsm.streams.purge(this.stream, { filter: this.subject }).catch(() => {});
  }
}

/** A worker id as one KV key token (letters, digits, `-` and `_`). */
function keyToken(id: string): string {
  return id.replace(/[^A-Za-z0-9_-]/g, '-');
}
