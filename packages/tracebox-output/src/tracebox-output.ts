import { type LinkAddress, type Log, type RecordBatch, silentLog } from '@tracehub/contracts';
import {
  type ByteChunk,
  type MissedReason,
  Outlet,
  type OutletClientStatus,
  OutletPort,
  type RecordFeed,
} from '@tracehub/live';
import {
  DEFAULT_TRACEBOX_PORT,
  encodeOstMarker,
  encodePhonetMarker,
  MarkerCode,
  outputTimestamp,
  PHONET_MEDIA_TCPIP,
  TimestampFlag,
} from '@tracehub/stp';
import type { TraceBoxCounters } from './tracebox-counters.js';

export type TraceBoxClientStatus = OutletClientStatus;

export interface TraceBoxOutputStatus {
  host: string;
  port: number;
  /** Messages the link's output numbered since the gateway started. */
  messages: number;
  clients: TraceBoxClientStatus[];
}

export interface TraceBoxOutputOptions {
  feed: RecordFeed;
  link: LinkAddress;
  counters: TraceBoxCounters;
  /** Most messages and bytes a client may fall behind before it misses the oldest (default 10 000 / 16 MiB). */
  queue?: { records: number; bytes: number };
  /** Tracebox port: sender object of the notices (default 0x0B). */
  port?: number;
  log?: Log;
}

/**
 * The trace box's output to its client applications, for one STP or SWD link: a TCP port
 * that streams every OST or PhoNet message of the link (`raw` of its live records, in record
 * order: messages, exceptions, markers) to any number of clients. The stream is one way; a
 * client that connects starts at the next message. Each batch is renumbered once with the
 * gateway's counters and pushed into one shared bounded outlet that every client reads at its
 * own pace: a client that falls behind misses the oldest messages, and is told so before its
 * next one by a marker 0x26 OVERFLOW (index 0) that says how many; the others lose nothing.
 */
export class TraceBoxOutput {
  private readonly outlet: Outlet<ByteChunk>;
  private readonly clients: OutletPort;
  private removeFromFeed: (() => void) | null = null;
  /** Whether the link's messages are PhoNet (seen from its last message). */
  private phonet = false;
  private messages = 0;
  /** Messages taken since the last push into the outlet (one push per turn of the event loop). */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private pushScheduled = false;
  private readonly log: Log;

  constructor(private readonly options: TraceBoxOutputOptions) {
    this.outlet = new Outlet(options.queue ?? { records: 10_000, bytes: 16 * 1024 * 1024 });
    this.log = options.log ?? silentLog;
    this.clients = new OutletPort(this.outlet, (n, reason) => this.notice(n, reason), 'trace box', this.log);
  }

  /** Listens on `port` (0: any) and starts taking the link's records; resolves to the port. */
  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    const bound = await this.clients.listen(port, host);
    const { link } = this.options;
    // Runs in the NATS callback: renumber once for every client, push; never waits.
    this.removeFromFeed = this.options.feed.add(
      (batch) => this.take(batch),
      (gap) => {
        if (
          gap.protocol === link.protocol &&
          gap.rig === link.rig &&
          gap.link === link.link &&
          this.clients.clientCount > 0
        )
          this.outlet.pushUnreceived(gap.records);
      },
    );
    this.log.info({ host, port: bound }, 'trace box output ready');
    return bound;
  }

  get port(): number {
    return this.clients.port;
  }

  /**
   * A batch of the link's records: every message is numbered with the gateway's counters
   * whether or not a client listens (the numbering does not depend on who is connected).
   */
  private take(batch: RecordBatch): void {
    const { link, counters } = this.options;
    if (batch.protocol !== link.protocol || batch.rig !== link.rig || batch.link !== link.link) return;
    if (this.clients.clientCount === 0) {
      this.count(batch);
      return;
    }
    const parts: Uint8Array[] = [];
    let bytes = 0;
    for (const record of batch.records) {
      const raw = record.raw ? Buffer.from(record.raw, 'base64') : undefined;
      let message: Uint8Array;
      if (raw && raw.length > 0) {
        this.phonet = raw[0] === PHONET_MEDIA_TCPIP;
        message = counters.stamp(raw);
        this.messages++;
      } else {
        // Bytes of the link lost before they were decoded (th-lost: the gateway's buffer was
        // full) have no message of their own: a client is told, in their place.
        const lostBytes = record.fields.lostBytes;
        if (record.kind !== 'error' || typeof lostBytes !== 'number' || lostBytes <= 0) continue;
        message = this.overflowMarker(lostBytes, `tracehub: ${lostBytes} bytes of the link lost before here`);
      }
      parts.push(message);
      bytes += message.length;
    }
    if (parts.length === 0) return;
    this.pending.push(...parts);
    this.pendingBytes += bytes;
    if (this.pushScheduled) return;
    this.pushScheduled = true;
    setImmediate(() => this.pushPending());
  }

  /**
   * A batch no client is there to take: the counters move on as `take` would move them, from
   * each record's kind and the first byte of its `raw` (two base64 characters), nothing decoded.
   */
  private count(batch: RecordBatch): void {
    const { counters } = this.options;
    for (const record of batch.records) {
      const raw = record.raw;
      if (!raw) continue;
      this.phonet = firstBase64Byte(raw) === PHONET_MEDIA_TCPIP;
      this.messages++;
      // `stamp` leaves messages shorter than 12 bytes (16 base64 characters) alone.
      if (raw.length >= 16) counters.skip(this.phonet, record.kind === 'marker');
    }
  }

  /**
   * One outlet entry for all the batches of one turn of the event loop: NATS may hand over
   * many batches in one turn, and readers write in the next, so entries per batch could
   * overrun the outlet's limit before even a fast client had its turn.
   */
  private pushPending(): void {
    this.pushScheduled = false;
    const parts = this.pending;
    if (parts.length === 0) return;
    this.pending = [];
    const bytes = this.pendingBytes;
    this.pendingBytes = 0;
    if (this.clients.clientCount === 0) return;
    const chunk = { bytes: parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes), messages: parts.length };
    this.outlet.push(chunk, parts.length, bytes);
  }

  /**
   * What a client is told in place of the messages it missed: a marker 0x26 OVERFLOW (the
   * trace box's own "internal buffer overflow"), index 0 (never a real one: the box's start at
   * 1), the count as a 32-bit big-endian binary parameter and the reason as its comment.
   */
  private notice(records: number, reason: MissedReason): Uint8Array {
    return this.overflowMarker(records, `tracehub: ${records} records dropped: ${noticeReason(reason)}`);
  }

  /** A marker 0x26 OVERFLOW, index 0, `count` as its 32-bit big-endian parameter and `text` as its comment. */
  private overflowMarker(count: number, text: string): Uint8Array {
    const params = new Uint8Array(4);
    new DataView(params.buffer).setUint32(0, Math.min(count, 0xffffffff));
    const comment = Buffer.from(`${text}\0`, 'utf8');
    const marker = {
      type: MarkerCode.OVERFLOW,
      sender: this.options.port ?? DEFAULT_TRACEBOX_PORT,
      timestamp: outputTimestamp(TimestampFlag.FIDO, BigInt(Date.now()) * 1_000_000n),
      index: 0,
      params,
      comment,
    };
    return this.phonet
      ? encodePhonetMarker({ ...marker, transaction: this.options.counters.transaction })
      : encodeOstMarker(marker);
  }

  async close(): Promise<void> {
    this.removeFromFeed?.();
    this.removeFromFeed = null;
    this.pending = [];
    this.pendingBytes = 0;
    await this.clients.close();
  }

  status(): TraceBoxOutputStatus {
    return { ...this.clients.status(), messages: this.messages };
  }

  /** Resolves once the link's records published from now on reach the output. */
  flush(): Promise<void> {
    return this.options.feed.flush();
  }
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The first byte of base64 text: its first six bits in the first character, two more in the second. */
function firstBase64Byte(text: string): number {
  return ((BASE64.indexOf(text[0]) << 2) | (BASE64.indexOf(text[1]) >> 4)) & 0xff;
}

/** Why a client missed records, as its notice says. */
function noticeReason(reason: MissedReason): string {
  if (reason === 'unreceived') return 'they did not reach the gateway live; they are stored';
  return reason === 'away' ? 'this client was not connected' : 'this client was slower than the stream';
}
