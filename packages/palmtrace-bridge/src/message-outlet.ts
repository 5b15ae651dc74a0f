import type { Socket } from 'node:net';
import type { RecordMessages } from './record-messages.js';

/** Messages written per turn of the event loop before the pump yields to other work. */
const MESSAGES_PER_TURN = 2000;

export interface OutletCounters {
  /** Messages handed to the socket (records' lines and dropped notices). */
  messagesSent: number;
  bytesSent: number;
  /** Records dropped, oldest first, because the queue was full. */
  dropped: number;
  /** Records waiting now. */
  queued: number;
}

/**
 * A bounded queue of encoded records between the record stream and one TCP connection.
 *
 * `offer` never waits and never grows memory past `capacity` records and `maxBytes` bytes:
 * when either is full, the oldest record is dropped and counted. Before the next record goes
 * out, the connection gets one text message saying how many were dropped. The pump writes only
 * while `socket.write` says the socket wants more and otherwise waits for 'drain', so a
 * Reporter that stops reading fills its TCP window and this queue, nothing else.
 */
export class MessageOutlet implements OutletCounters {
  private readonly ring: (RecordMessages | undefined)[];
  private head = 0;
  private count = 0;
  private queuedBytes = 0;
  private socket: Socket | null = null;
  private blocked = false;
  private scheduled = false;
  private droppedPending = 0;
  private roomWaiters: Array<() => void> = [];
  messagesSent = 0;
  bytesSent = 0;
  dropped = 0;

  constructor(
    readonly capacity: number,
    private readonly maxBytes: number,
    private readonly droppedNotice: (dropped: number) => Uint8Array,
  ) {
    this.ring = new Array(capacity);
  }

  get queued(): number {
    return this.count;
  }

  get bytesQueued(): number {
    return this.queuedBytes;
  }

  get attached(): boolean {
    return this.socket !== null;
  }

  /** Queues one record's messages; drops the oldest records when full. Never waits. */
  offer(messages: RecordMessages): void {
    const size = sizeOf(messages);
    while (this.count > 0 && (this.count >= this.capacity || this.queuedBytes + size > this.maxBytes)) {
      this.dropOldest();
    }
    this.ring[(this.head + this.count) % this.capacity] = messages;
    this.count++;
    this.queuedBytes += size;
    this.schedule();
  }

  /** Resolves once the queue has room for another record (a replay waits here instead of dropping). */
  whenRoom(): Promise<void> {
    if (this.count < this.capacity && this.queuedBytes < this.maxBytes) return Promise.resolve();
    return new Promise((resolve) => this.roomWaiters.push(resolve));
  }

  /** Starts sending on a connected socket. */
  attach(socket: Socket): void {
    this.socket = socket;
    this.blocked = false;
    this.schedule();
  }

  /** The connection is gone: records queue (and drop) until the next `attach`. */
  detach(): void {
    this.socket = null;
    this.blocked = false;
  }

  /** Forgets every queued record (the endpoint is being removed). */
  clear(): void {
    this.ring.fill(undefined);
    this.head = 0;
    this.count = 0;
    this.queuedBytes = 0;
    this.wakeRoomWaiters();
  }

  private dropOldest(): void {
    const oldest = this.ring[this.head];
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) % this.capacity;
    this.count--;
    if (oldest) this.queuedBytes -= sizeOf(oldest);
    this.dropped++;
    this.droppedPending++;
  }

  private schedule(): void {
    if (this.scheduled || this.blocked || this.socket === null) return;
    if (this.count === 0 && this.droppedPending === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const socket = this.socket;
    if (socket === null || this.blocked || socket.destroyed) return;
    let written = 0;
    let writable = true;
    socket.cork();
    while (writable && written < MESSAGES_PER_TURN && (this.droppedPending > 0 || this.count > 0)) {
      if (this.droppedPending > 0) {
        const notice = this.droppedNotice(this.droppedPending);
        this.droppedPending = 0;
        writable = this.write(socket, notice);
        written++;
        continue;
      }
      const messages = this.ring[this.head] as RecordMessages;
      this.ring[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.count--;
      this.queuedBytes -= sizeOf(messages);
      if (messages instanceof Uint8Array) {
        writable = this.write(socket, messages);
        written++;
      } else {
        for (const m of messages) writable = this.write(socket, m) && writable;
        written += messages.length;
      }
    }
    socket.uncork();
    this.wakeRoomWaiters();
    if (!writable) {
      this.blocked = true;
      socket.once('drain', () => {
        if (this.socket !== socket) return;
        this.blocked = false;
        this.schedule();
      });
      return;
    }
    this.schedule();
  }

  private write(socket: Socket, message: Uint8Array): boolean {
    this.messagesSent++;
    this.bytesSent += message.length;
    return socket.write(message);
  }

  private wakeRoomWaiters(): void {
    if (this.roomWaiters.length === 0 || this.count >= this.capacity || this.queuedBytes >= this.maxBytes) return;
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }
}

function sizeOf(messages: RecordMessages): number {
  if (messages instanceof Uint8Array) return messages.length;
  let n = 0;
  for (const m of messages) n += m.length;
  return n;
}
