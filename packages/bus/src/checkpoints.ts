import { type KV, Kvm } from '@nats-io/kv';
import type { JsonValue } from '@tracehub/contracts';
import type { Bus } from './connect.js';

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

/** Checkpoints in the `th_decoder_state` bucket, one key per link. */
export class CheckpointStore {
  private constructor(private readonly kv: KV) {}

  static async open(bus: Bus): Promise<CheckpointStore> {
    return new CheckpointStore(await new Kvm(bus.js).open(bus.names.decoderStateBucket));
  }

  async get(key: string): Promise<DecoderCheckpoint | undefined> {
    const entry = await this.kv.get(key);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return entry.json<DecoderCheckpoint>();
  }

  async put(key: string, checkpoint: DecoderCheckpoint): Promise<void> {
    await this.kv.put(key, JSON.stringify(checkpoint));
  }
}
