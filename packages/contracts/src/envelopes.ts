import type { LinkMarker } from './codec.js';
import type { Protocol } from './names.js';
import type { BatchRecord, TraceRecord } from './record.js';

/**
 * A stretch of a chunk that the link sent without a pause: from `offset` to the next
 * stretch's offset (or the chunk's end), after the link was idle `pauseNs`, its last byte read
 * at `recvNs`. STP v1 resynchronises on pauses: a gateway keeps them inside a chunk this way
 * rather than cutting a chunk at every pause (a chunk costs the same whatever its size).
 */
export interface ChunkSegment {
  offset: number;
  pauseNs: bigint;
  recvNs: bigint;
}

/** What the headers of one raw chunk say, read into types. */
export interface RawChunkMeta {
  session: string;
  chunk: number;
  /** Gateway receive time, ns since the Unix epoch. */
  recvNs: bigint;
  /** Bytes dropped by the gateway just before this chunk. */
  lost: number;
  /** True on the empty chunk that closes a session. */
  eos: boolean;
  /** Idle time of the link before the chunk's first byte, ns, when the gateway measured it. */
  pauseNs?: bigint;
  /** The stretches of the chunk read without a pause, when there is more than one (`th-segments`). */
  segments?: ChunkSegment[];
  /** Link settings the gateway was given (`th-settings`): they override the stored ones for the session. */
  settings?: Record<string, unknown>;
  /** The session is a capture of its own (`th-capture`): decoded from nothing. */
  capture?: boolean;
  /** A marker asked for on the live link at this point (`th-marker`). */
  marker?: LinkMarker;
}

/**
 * The payload of one message on TRACE_REC: every record decoded from one raw chunk
 * (possibly none), so that the message id `<session>.<chunk>` de-duplicates a re-decode.
 * On the bus the records leave out what the envelope says (`BatchRecord`); readers give them
 * back whole (`TraceRecord`, the default).
 */
export interface RecordBatch<R extends BatchRecord = TraceRecord> {
  protocol: Protocol;
  rig: string;
  link: string;
  session: string;
  chunk: number;
  /** Receive time of the raw chunk, ns since the Unix epoch, decimal. */
  hostNs: string;
  /** True when this batch answers the end-of-session chunk: nothing more follows in the session. */
  eos: boolean;
  /** On the end-of-session batch: how many records the whole session has (seq 0..n-1). */
  sessionRecordCount?: number;
  records: R[];
}

/**
 * Request on `ctl.<rig>.<link>`: bytes for the gateway to write to the target link, or (QS
 * links) a QS-RX command for the gateway to lay out with the link's own QS-RX counter,
 * dictionaries and target sizes, answered with the target's answer.
 */
export interface ControlRequest {
  /** Base64 of the bytes to write, exactly as they go on the wire. */
  bytes?: string;
  /**
   * Instead of bytes: end the link's session and start a new one on the same connection (the
   * reason is logged), so that new link settings apply at once. The target stays connected.
   */
  newSession?: string;
  /** How long to collect the target's reply bytes before answering, ms (0: do not wait). */
  replyWindowMs?: number;
  /** A QS-RX command (`{ command: 'tick', rate: 0 }`, see `@tracehub/qspy-frontend` QsCommand). */
  qs?: { command: string; [field: string]: unknown };
  /** How long to wait for the target's answer to `qs`, ms. */
  answerTimeoutMs?: number;
  /** Sizes for `qs` while the target has not sent its info on this connection (the last session's). */
  sizes?: { objPtrSize?: number; funPtrSize?: number; sigSize?: number };
  /** Asks for the link's control state (target, dictionaries, front-end port) instead. */
  status?: boolean;
  /** Frees the link's front-end port from the front-end that holds it (it gets DETACH). */
  releaseFrontEnd?: boolean;
  /** Asks how the link is connected (any protocol): its source, the target, connections not taken. */
  connection?: boolean;
  /**
   * Sets a marker after every byte the link has read (a user marker with its comment, or a new
   * time base): it goes through the decoder in its place in the stream (`th-marker`).
   */
  marker?: LinkMarker;
  /**
   * Base64 of data to upload to the device with the trace box's UART upload (STP links:
   * break, the device's bit rate, length and acknowledgements); the reply's `result` says how it went.
   */
  upload?: string;
}

/** A link's connection as its gateway sees it: the answer to a `connection` request. */
export interface LinkConnectionState {
  /** What the gateway reads: `tcp-listen`, `tcp-connect`, `serial`, `udp`, `file`, `stdin`. */
  source: {
    kind: string;
    /** The source as the gateway's log names it: `tcp-listen 0.0.0.0:6601`. */
    description: string;
    /** tcp-listen: what a second target connecting does to the first (`replace` or `refuse`). */
    secondTarget?: 'replace' | 'refuse';
    /** tcp-listen: a connection silent this long after it opens is closed, ms (0: never). */
    idleTimeoutMs?: number;
  };
  /** The target the open session reads from (its `address:port`, or the device or file), since when (ms since the epoch). */
  target: { address: string; sinceMs: number } | null;
  /** Connections the link did not take or closed, since the gateway started (tcp-listen). */
  notTaken: { refused: number; replaced: number; idleClosed: number };
}

/** Answer of the gateway that owns the link. */
export interface ControlReply {
  ok: boolean;
  /** How many bytes were written to the link. */
  written: number;
  /** The link session the bytes were written into. */
  session?: string;
  /** Why the write failed, when it did. */
  error?: string;
  /** The field of `qs` at fault, when the command was refused for a bad value. */
  field?: string;
  /** The target's answer to `qs` (`@tracehub/qspy-frontend` CommandResult). */
  result?: Record<string, unknown>;
  /** The link's control state, for `status` requests. */
  status?: Record<string, unknown>;
  /** The link's connection, for `connection` requests. */
  connection?: LinkConnectionState;
}
