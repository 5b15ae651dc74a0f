import { type KV, Kvm } from '@nats-io/kv';
import type { Bus } from '@tracehub/bus';
import type { JsonValue } from '@tracehub/contracts';

/** What a decoder has done on a link: enough for any worker to continue it exactly. */
export interface DecoderCheckpoint {
  session: string;
  /** Last raw chunk whose records were published. */
  lastChunk: number;
  /** Seq the next record of the session gets. */
  nextSeq: number;
  /** True once the session's end-of-stream chunk was handled. */
  ended: boolean;
  /** The codec's snapshot after `lastChunk`. */
  state: JsonValue;
}

export class CheckpointConflictError extends Error {
  override name = 'CheckpointConflictError';
  constructor(key: string, cause: unknown) {
    super(`checkpoint ${key} was written by another worker: this worker no longer owns the link`, { cause });
  }
}

/** Checkpoints in the `th_decoder_state` bucket, one key per link. */
export class CheckpointStore {
  private constructor(private readonly kv: KV) {}

  static async open(bus: Bus): Promise<CheckpointStore> {
    return new CheckpointStore(await new Kvm(bus.js).open(bus.names.decoderStateBucket));
  }

  /** The checkpoint and the revision it was read at (0 when there is none). */
  async get(key: string): Promise<{ checkpoint: DecoderCheckpoint | undefined; revision: number }> {
    const entry = await this.kv.get(key);
    if (entry?.operation !== 'PUT') return { checkpoint: undefined, revision: entry?.revision ?? 0 };
    return { checkpoint: entry.json<DecoderCheckpoint>(), revision: entry.revision };
  }

  /**
   * Writes a checkpoint only if nobody wrote one since `revision` (0: since it was deleted or
   * never written), so a worker that lost its lease can never overwrite its successor's
   * progress. Returns the new revision; throws when the write was refused.
   */
  async put(key: string, checkpoint: DecoderCheckpoint, revision: number): Promise<number> {
    const value = JSON.stringify(checkpoint);
    try {
      return revision === 0 ? await this.kv.create(key, value) : await this.kv.update(key, value, revision);
    } catch (err) {
      // A write whose answer was lost (a timeout while the cluster changes leader) may have
      // landed: then the stored checkpoint is ours, and its revision is the one to go on from.
      const landed = await this.landedRevision(key, value);
      if (landed !== undefined) return landed;
      throw new CheckpointConflictError(key, err);
    }
  }

  /** The revision of the stored checkpoint when it is exactly `value`. */
  private async landedRevision(key: string, value: string): Promise<number | undefined> {
    try {
      const entry = await this.kv.get(key);
      return entry?.operation === 'PUT' && entry.string() === value ? entry.revision : undefined;
    } catch {
      return undefined;
    }
  }
}
