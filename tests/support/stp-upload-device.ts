// A traced device's side of the trace box's UART upload (reference §3.1, stp-protocol.md §11),
// over TCP: it connects to a gateway's tcp-listen STP link, takes the telnet BRK (FF F3) as
// the break, and answers inside its STP trace as a device does: control messages on channel
// 0x01 (header 00 00 ID 00), after ASYNC + VERSION so that a decoder starting anywhere syncs.
import { connect, type Socket } from 'node:net';
import { StpStreamWriter } from '@tracehub/stp';

export type DeviceBehaviour =
  /** Answers the break with `bitRate`, acknowledges the length and the data. */
  | { kind: 'answers'; bitRate: number }
  /** Never answers the break. */
  | { kind: 'silent' }
  /** Answers the break, never acknowledges the length. */
  | { kind: 'no-length-ack'; bitRate: number }
  /** Acknowledges the length, never the data. */
  | { kind: 'no-data-ack'; bitRate: number }
  /** Answers the break with the obsolete ASCII bit rate (ID 0x03), then acknowledges as usual. */
  | { kind: 'ascii'; text: string };

/** One control message as STP: ASYNC, VERSION 3, M8 0x10, C8 0x01, the header and payload as D32 words, the last marked. */
export function controlMessage(id: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const bytes = Buffer.concat([Buffer.from([0x00, 0x00, id, 0x00]), payload]);
  const padded = Buffer.concat([bytes, Buffer.alloc((4 - (bytes.length % 4)) % 4)]);
  const w = new StpStreamWriter().async().version(3).m8(0x10).c8(0x01);
  for (let at = 0; at < padded.length; at += 4) w.data(4, padded.readUInt32BE(at), at + 4 === padded.length ? 'M' : '');
  return Buffer.from(w.bytes());
}

/** What a device of `behaviour` sends: its answer to the break, and its acknowledgements (null: none). */
export function deviceAnswers(behaviour: DeviceBehaviour): {
  rate: Buffer | null;
  ackLength: Buffer | null;
  ackData: Buffer | null;
} {
  const b = behaviour;
  if (b.kind === 'silent') return { rate: null, ackLength: null, ackData: null };
  let rate: Buffer;
  if (b.kind === 'ascii') rate = controlMessage(0x03, Buffer.from(`${b.text}\0`, 'latin1'));
  else {
    const bps = Buffer.alloc(4);
    bps.writeUInt32BE(b.bitRate);
    rate = controlMessage(0x04, bps);
  }
  return {
    rate,
    ackLength: b.kind === 'no-length-ack' ? null : controlMessage(0x01),
    ackData: b.kind === 'no-data-ack' ? null : controlMessage(0x02),
  };
}

/** Some trace: a link session begins with its first byte. */
export function someTrace(): Buffer {
  return Buffer.from(new StpStreamWriter().async().version(3).m8(0x10).c8(0x02).data(4, 0x1234, 'M').bytes());
}

export class UploadDevice {
  /** What the device received after the length: the uploaded data. */
  readonly received: Buffer[] = [];
  lengthSeen: number | null = null;
  breaks = 0;
  private pending = Buffer.alloc(0);
  private state: 'idle' | 'length' | 'data' = 'idle';
  private readonly answers: ReturnType<typeof deviceAnswers>;

  private constructor(
    readonly socket: Socket,
    behaviour: DeviceBehaviour,
  ) {
    this.answers = deviceAnswers(behaviour);
    socket.on('data', (b: Buffer) => this.take(b));
  }

  static async connect(port: number, behaviour: DeviceBehaviour): Promise<UploadDevice> {
    const socket = connect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    const device = new UploadDevice(socket, behaviour);
    socket.write(someTrace());
    return device;
  }

  get data(): Buffer {
    return Buffer.concat(this.received);
  }

  private take(bytes: Buffer): void {
    this.pending = Buffer.concat([this.pending, bytes]);
    for (;;) {
      if (this.state === 'idle') {
        const at = this.pending.indexOf(Buffer.from([0xff, 0xf3]));
        if (at < 0) return;
        this.pending = this.pending.subarray(at + 2);
        this.breaks++;
        this.answerBreak();
      } else if (this.state === 'length') {
        if (this.pending.length < 4) return;
        this.lengthSeen = this.pending.readUInt32LE(0);
        this.pending = this.pending.subarray(4);
        this.state = 'data';
        if (this.answers.ackLength) this.socket.write(this.answers.ackLength);
      } else {
        const want = (this.lengthSeen ?? 0) - this.data.length;
        if (this.pending.length === 0) return;
        const take = this.pending.subarray(0, want);
        this.received.push(Buffer.from(take));
        this.pending = this.pending.subarray(take.length);
        if (this.data.length === this.lengthSeen) {
          this.state = 'idle';
          if (this.answers.ackData) this.socket.write(this.answers.ackData);
        }
      }
    }
  }

  private answerBreak(): void {
    if (!this.answers.rate) return;
    this.socket.write(this.answers.rate);
    this.state = 'length';
  }
}
