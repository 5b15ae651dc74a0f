import type { Bus, LinkAddress } from '@tracehub/bus';
import type { JsonValue, Log, Protocol, TraceDecoder } from '@tracehub/contracts';

/** Per-link codec settings (STP version, endianness map, output protocol, QS sizes...). */
export type LinkSettings = { [key: string]: JsonValue };

export interface DecoderFactory {
  create(link: LinkAddress, settings: LinkSettings): TraceDecoder;
  restore(link: LinkAddress, settings: LinkSettings, snapshot: JsonValue): TraceDecoder;
  /**
   * A decoder for a link's next session that keeps what the codec carries across reconnects
   * (QS: the target configuration and dictionaries, as qspy keeps them), from the previous
   * session's last snapshot. Without it every session starts from nothing.
   */
  continueFrom?(link: LinkAddress, settings: LinkSettings, previous: JsonValue): TraceDecoder;
}

/** What the worker did with one raw chunk; services turn it into metrics. */
export interface ChunkDecoded {
  link: LinkAddress;
  bytes: number;
  records: number;
  errors: number;
  gaps: number;
  lostBytes: number;
  decodeMs: number;
  totalMs: number;
}

export interface DecoderWorkerOptions {
  bus: Bus;
  protocols: Protocol[];
  /** Unique per process: written into the leases it holds. */
  workerId: string;
  factory: DecoderFactory;
  /** Settings of a link, read when a session starts (default: none). */
  linkSettings?: (link: LinkAddress) => Promise<LinkSettings>;
  /** How often held leases are refreshed and new links looked for, ms (well under the lease TTL). */
  tickMs?: number;
  /** How long a delivered chunk may stay unacked before it is delivered again, ms. */
  ackWaitMs?: number;
  /**
   * How long decoded chunks wait for their checkpoint, ms (default 1000): a link's checkpoint is
   * written, and its chunks acknowledged, at most this often (and at every session's end), not
   * once a chunk. A worker that dies leaves at most this much to decode again.
   */
  checkpointMs?: number;
  /** Chunks of a link delivered ahead of their acknowledgement, at most (default 64). */
  maxChunksInFlight?: number;
  log?: Log;
  onChunk?: (info: ChunkDecoded) => void;
  /** A record publish refused (`full`: the record stream is full) or failing; the link holds its chunk. */
  onRefused?: (info: { link: LinkAddress; full: boolean }) => void;
  /** Longest wait between two tries of a refused publish, ms (the wait doubles from 100 up to it). */
  maxHoldBackoffMs?: number;
}
