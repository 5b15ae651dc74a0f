// The conformance list of the front-end spec (section 16), items 1 to 26, one test each.
// Items 27 to 31 need the unmodified Python clients and a built QUTest target: see the README.
import { createSocket } from 'node:dgram';
import { encodeFrame, QsPayloadWriter } from '@tracehub/qs';
import { describe, expect, it } from 'vitest';
import { type FrontEndPeer, QspyFrontEnd } from '../src/front-end.js';
import { Lines } from '../src/protocol.js';
import { QsTargetLink } from '../src/target-link.js';
import { FrontEndPort } from '../src/udp-port.js';
import { hex, replay } from './transcript.js';

const A: FrontEndPeer = { address: '127.0.0.1', port: 40001 };
const B: FrontEndPeer = { address: '127.0.0.1', port: 40002 };

function text(seq: number, rec: number, line: string): string {
  return hex(Uint8Array.from([seq, 0, rec, ...Buffer.from(line, 'latin1')]));
}

/** A front-end port and its target side, with everything they send recorded. */
function session() {
  const sent: { to: number; hex: string }[] = [];
  const frames: string[] = [];
  const target = new QsTargetLink({ write: (f) => frames.push(hex(f)) });
  const frontEnd = new QspyFrontEnd({ target, send: (d, to) => sent.push({ to: to.port, hex: hex(d) }) });
  let trgSeq = 0;
  const s = {
    sent,
    frames,
    target,
    frontEnd,
    /** Datagrams sent to a port, hex. */
    to: (peer: FrontEndPeer = A) => sent.filter((x) => x.to === peer.port).map((x) => x.hex),
    /** The text lines (packets of record type 00) among them. */
    textLines: (peer: FrontEndPeer = A) => s.to(peer).filter((h) => h.slice(2, 4) === '00'),
    fe: (bytes: number[], from: FrontEndPeer = A) => frontEnd.datagram(Uint8Array.from(bytes), from),
    /** A target record with the target's next sequence number. */
    record: (id: number, payload: Uint8Array = new Uint8Array(0)) => {
      if (!target.connected) target.targetConnected();
      trgSeq = (trgSeq + 1) & 0xff;
      target.data(encodeFrame(trgSeq, id, payload));
      return trgSeq;
    },
    targetInfo: (reset: boolean, o: { version?: number; objPtr?: number; funPtr?: number } = {}) =>
      s.record(64, targetInfo(reset, o.version ?? 740, o.objPtr ?? 4, o.funPtr ?? 4)),
    clear: () => {
      sent.length = 0;
      frames.length = 0;
    },
  };
  return s;
}

function targetInfo(reset: boolean, version: number, objPtr: number, funPtr: number): Uint8Array {
  return Uint8Array.from([
    reset ? 0xff : 0,
    version & 0xff,
    version >> 8,
    0x22,
    0x21,
    0x22,
    objPtr | (funPtr << 4),
    4,
    32,
    0x13,
    56,
    34,
    12,
    23,
    11,
    26,
  ]);
}

const w = () => new QsPayloadWriter();
const name0 = (s: string) => [...Buffer.from(s, 'latin1'), 0];

describe('front-end spec 16: attach/detach', () => {
  it('1: 00 80 02 over UDP gets exactly one datagram 01 80 within 1 s, then 3 s of silence with no target', async () => {
    const target = new QsTargetLink({ write: () => {} });
    let port: FrontEndPort | undefined;
    const frontEnd = new QspyFrontEnd({ target, send: (d, to) => port?.send(d, to) });
    port = new FrontEndPort({ host: '127.0.0.1', port: 0, frontEnd });
    await port.start();
    const client = createSocket('udp4');
    const received: { hex: string; ms: number }[] = [];
    const t0 = performance.now();
    client.on('message', (m) => received.push({ hex: m.toString('hex'), ms: performance.now() - t0 }));
    await new Promise<void>((r) => client.bind(0, '127.0.0.1', () => r()));
    client.send(Uint8Array.of(0, 0x80, 2), port.port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 3500));
    expect(received.map((x) => x.hex)).toEqual(['0180']);
    expect(received[0].ms).toBeLessThan(1000);
    client.close();
    await port.stop();
  });

  it('2: a legacy 00 80 gets 01 80; target records then arrive binary only', () => {
    const s = session();
    s.fe([0, 0x80]);
    s.targetInfo(true);
    s.record(58);
    expect(s.to()).toEqual(['0180', hex(Uint8Array.of(1, 64, ...targetInfo(true, 740, 4, 4))), '023a']);
    expect(s.frontEnd.status().channels).toBe(1);
  });

  it('3: re-ATTACH with a continuous seq gets 01 80 and restarts the line counter', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([1, 0x86]); // SEQUENCE_OUT: a text line with seq 2
    s.fe([2, 0x80, 2]);
    s.fe([3, 0x86]);
    expect(s.to()).toEqual(['0180', text(2, 134, Lines.noSequenceList), '0180', text(2, 134, Lines.noSequenceList)]);
  });

  it('4: re-ATTACH with a seq jump: the discontinuity line, then 01 80', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([9, 0x80, 2]);
    expect(s.to()).toEqual(['0180', text(2, 128, Lines.discontinuity(1, 9)), '0180']);
  });

  it('5: a gap in the front-end seq on a normal packet: the line, and the packet is still handled', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0x80, 2]);
    s.fe([5, 0x03, 0]);
    expect(s.to()).toEqual(['0180', text(2, 128, Lines.discontinuity(1, 5))]);
    expect(s.frames).toEqual(['010300fb7e']);
  });

  it('6: DETACH gets no reply, and another address can attach', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([1, 0x81]);
    s.fe([0, 0x80, 2], B);
    expect(s.to(A)).toEqual(['0180']);
    expect(s.to(B)).toEqual(['0180']);
  });

  it('7: DETACH with a payload detaches without a reply (the service keeps running: documented choice)', () => {
    const events: string[] = [];
    const s = session();
    const fe = new QspyFrontEnd({
      target: s.target,
      send: () => events.push('sent'),
      onEvent: (e) => events.push(e.kind),
    });
    fe.datagram(Uint8Array.of(0, 0x80, 2), A);
    fe.datagram(Uint8Array.of(1, 0x81, 1), A);
    expect(events).toEqual(['sent', 'attached', 'detached']);
    expect(fe.status()).toMatchObject({ peer: null, channels: 0 });
  });

  it('8: shutdown while attached sends [seq] 81', () => {
    const s = session();
    s.fe([0, 0x80, 1]);
    s.fe([1, 0x86]); // no line: binary only, and beSeq does not move
    s.frontEnd.shutdown();
    expect(s.to()).toEqual(['0180', '0281']);
  });
});

describe('front-end spec 16: multiple front-ends, robustness', () => {
  it('9: a second ATTACH gets no reply; the holder gets the WARN line when its text channel is on', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([0, 0x80, 2], B);
    expect(s.to(B)).toEqual([]);
    expect(s.to(A)).toEqual(['0180', text(2, 128, Lines.socketInUse)]);
    const binary = session();
    binary.fe([0, 0x80, 1]);
    binary.fe([0, 0x80, 2], B);
    expect(binary.to(A)).toEqual(['0180']);
    expect(binary.to(B)).toEqual([]);
  });

  it('9 (deviation, off by default): an ATTACH takes the port from a holder silent for idleTakeoverMs; the holder gets DETACH', () => {
    const sent: string[] = [];
    const target = new QsTargetLink({ write: () => {} });
    const fe = new QspyFrontEnd({ target, send: (d, to) => sent.push(`${to.port}:${hex(d)}`), idleTakeoverMs: 30_000 });
    fe.datagram(Uint8Array.of(0, 0x80, 2), A, 1000);
    fe.datagram(Uint8Array.of(0, 0x80, 2), B, 20_000); // A silent for 19 s: refused
    fe.datagram(Uint8Array.of(1, 0x86), A, 25_000);
    fe.datagram(Uint8Array.of(0, 0x80, 2), B, 54_000); // 29 s: refused
    fe.datagram(Uint8Array.of(0, 0x80, 2), B, 55_000); // 30 s: taken over
    expect(sent).toEqual([
      `${A.port}:0180`,
      `${A.port}:${text(2, 128, Lines.socketInUse)}`,
      `${A.port}:${text(3, 134, Lines.noSequenceList)}`,
      `${A.port}:${text(4, 134, Lines.socketInUse)}`,
      `${A.port}:0581`,
      `${B.port}:0180`,
    ]);
    expect(fe.status()).toMatchObject({ peer: B, channels: 2, lastHeardMs: 55_000 });
  });

  it('9 over UDP: the port gives the state machine the wall clock, so a silent holder loses the port', async () => {
    const target = new QsTargetLink({ write: () => {} });
    let port: FrontEndPort | undefined;
    const frontEnd = new QspyFrontEnd({ target, send: (d, to) => port?.send(d, to), idleTakeoverMs: 200 });
    port = new FrontEndPort({ host: '127.0.0.1', port: 0, frontEnd });
    await port.start();
    const clients = [createSocket('udp4'), createSocket('udp4')];
    const received: string[][] = [[], []];
    for (const [i, c] of clients.entries()) {
      c.on('message', (m) => received[i].push(m.toString('hex')));
      await new Promise<void>((r) => c.bind(0, '127.0.0.1', () => r()));
    }
    const send = async (i: number, bytes: number[]) => {
      await new Promise<void>((r) => clients[i].send(Uint8Array.from(bytes), port.port, '127.0.0.1', () => r()));
      await new Promise((r) => setTimeout(r, 50));
    };
    await send(0, [0, 0x80, 1]);
    await send(1, [0, 0x80, 1]); // the holder spoke 50 ms ago: refused
    expect(frontEnd.status().peer?.port).toBe(clients[0].address().port);
    await new Promise((r) => setTimeout(r, 250));
    await send(1, [0, 0x80, 1]); // silent for 300 ms: taken over
    expect(frontEnd.status().peer?.port).toBe(clients[1].address().port);
    expect(received[0]).toEqual(['0180', '0281']);
    expect(received[1]).toEqual(['0180']);
    for (const c of clients) c.close();
    await port.stop();
  });

  it('10: an empty and a 1-byte datagram leave the port as it was', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    const before = s.frontEnd.status();
    s.fe([]);
    s.fe([1]);
    expect(s.to()).toEqual(['0180']);
    expect(s.frontEnd.status()).toEqual({ ...before, datagramsIn: before.datagramsIn + 2, ignored: 2 });
    expect(s.frontEnd.status().lastHeardMs).toBe(0);
    s.fe([1, 0x86]); // the next datagram in sequence: no discontinuity
    expect(s.to()[1]).toBe(text(2, 134, Lines.noSequenceList));
  });

  it('11: a 600-byte raw packet is refused with an error line; nothing reaches the target', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0x80, 2]);
    s.fe([1, 1, ...new Array(597).fill(0x11)]);
    expect(s.frames).toEqual([]);
    expect(s.to()[1]).toBe(text(2, 128, Lines.frameTooLong(1, 601, 512)));
    s.fe([2, 0]); // the counter did not move: the next frame still has QS-RX seq 1
    expect(s.frames).toEqual(['0100fe7e']);
  });
});

describe('front-end spec 16: forwarding', () => {
  it('12: a text-only front-end gets the 18-byte target info first, no dictionary lines, then TstPause', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    const seq = s.targetInfo(true, { objPtr: 8, funPtr: 8 });
    s.record(61, w().uint(0x40e190, 8).str('Philo_inst[2]').toBytes());
    s.record(60, w().u16(4).uint(0, 8).str('EAT_SIG').toBytes());
    s.record(58);
    const out = s.to().slice(1);
    expect(out[0]).toHaveLength(36);
    expect(out[0].slice(0, 6)).toBe(`${hex(Uint8Array.of(seq))}40ff`);
    expect(out.slice(1)).toEqual([text(2, 58, '           TstPause')]);
  });

  it('13: a binary front-end gets every record but QS_EMPTY, de-escaped, without checksum; 500 bytes whole; over 512 dropped with a line', () => {
    const s = session();
    s.fe([0, 0x80, 3]);
    s.targetInfo(true);
    s.record(0);
    s.record(101, Uint8Array.of(0x7e, 0x7d, 0));
    const big = new Uint8Array(498).fill(0x7e);
    const bigSeq = s.record(100, big);
    s.record(100, new Uint8Array(600));
    const binary = s.to().filter((h) => h.slice(2, 4) !== '00');
    expect(binary).toEqual([
      '0180',
      hex(Uint8Array.of(1, 64, ...targetInfo(true, 740, 4, 4))),
      '03657e7d00',
      hex(Uint8Array.of(bigSeq, 100, ...big)),
    ]);
    expect(binary[3]).toHaveLength(1000);
    const lines = s.textLines();
    expect(lines).toContain(text(lines.length, 100, '   <COMMS> ERROR    Record too long at Seq=  4,Rec=USER+  0'));
  });

  it("14: channels=3: each binary record before its line; lines count qspy's seq, records carry the target's", () => {
    const s = session();
    s.fe([0, 0x80, 3]);
    for (let i = 0; i < 5; i++) s.record(0);
    s.record(66, Uint8Array.of(14));
    expect(s.to()).toEqual(['0180', '0642' + '0e', text(2, 66, '           Trg-Ack  QS_RX_TEST_CONTINUE')]);
  });

  it('15: a bad checksum is not forwarded (its line instead); a gap gives its line, then the record', () => {
    const s = session();
    s.fe([0, 0x80, 3]);
    s.record(66, Uint8Array.of(14));
    const bad = encodeFrame(2, 66, Uint8Array.of(7));
    bad[bad.length - 2] ^= 0x55;
    s.target.data(bad);
    s.target.data(encodeFrame(9, 66, Uint8Array.of(7)));
    expect(s.to().slice(3)).toEqual([
      text(3, 66, '   <COMMS> ERROR    Bad checksum in Rec=QS_RX_STATUS(?),Seq=1'),
      text(4, 66, '   <COMMS> ERROR    Discontinuity Seq=1->9'),
      '094207',
      text(5, 66, '           Trg-Ack  QS_RX_TEST_SETUP'),
    ]);
  });

  it('16: text lines carry no NUL, CR or LF (the golden pairs are compared byte for byte in golden-pairs.test.ts)', () => {
    const r = replay('s10_channels3_full.txt', { reconnectIn: ['3y'] });
    const lines = r.actual.filter((x) => x.hex.slice(2, 4) === '00').map((x) => Buffer.from(x.hex, 'hex').subarray(3));
    expect(lines.length).toBeGreaterThan(50);
    for (const line of lines) expect([...line].filter((b) => b === 0 || b === 10 || b === 13)).toEqual([]);
  });
});

describe('front-end spec 16: commands to QS-RX frames', () => {
  it('17: raw ids 0-16 in qutest packings become frames with QS-RX seq 1, 2, 3...; 7D/7E stuffed, checksum included', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0x80, 2]);
    const packets = [
      [0],
      [1, 5, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0],
      [2],
      [3, 0],
      [4, 0x58, 0, 4, 3],
      [5, 0, 0, 1, 2, 0x7e, 0x7d],
      [6, 0, 0, 1, 4, 0x7e],
      [7],
      [8],
      [9, 7, 0, 0, 0, 0xf2, 0x12, 0x40, 0],
      [10, 16, ...new Array(15).fill(0xff), 0x1f],
      [11, 16, ...new Array(16).fill(0xff)],
      [12, 0, 0x90, 0xe1, 0x40, 0],
      [13, 5, 0x90, 0xe1, 0x40, 0],
      [14],
      [15, 0],
      [16, 0, 4, 0, 1, 0, 2],
    ];
    for (const [i, p] of packets.entries()) s.fe([i + 1, ...p]);
    expect(s.frames).toEqual(packets.map((p, i) => hex(encodeFrame(i + 1, p[0], Uint8Array.from(p.slice(1))))));
    // Stuffing as qspy wrote it in s5: a checksum of 0x7E goes out as 7D 5E.
    const peek = session();
    peek.target.targetConnected();
    for (let i = 0; i < 29; i++) peek.target.send(Uint8Array.of(14));
    peek.frames.length = 0;
    peek.fe([0, 4, 0x58, 0, 4, 3]);
    expect(peek.frames).toEqual(['1e045800040 37d5e7e'.replace(' ', '')]);
  });

  it('18: after the target reconnects, or a reset target info, the next frame has seq 1', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0]);
    s.fe([1, 0]);
    s.target.targetDisconnected();
    s.target.targetConnected();
    s.fe([2, 0]);
    s.fe([3, 0]);
    s.targetInfo(true);
    s.fe([4, 0]);
    s.targetInfo(false);
    s.fe([5, 0]);
    expect(s.frames.map((f) => f.slice(0, 2))).toEqual(['01', '02', '01', '02', '01', '02']);
  });

  it('19: with no target connected, raw INFO gives the "Sending Data" line with Rec=0,Len=4', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([1, 0]);
    expect(s.to()).toEqual(['0180', text(2, 128, Lines.sendFailed(0, 4))]);
  });

  it('20: by-name AO filter, current object, probe and command: the value replaces the placeholder, the name is dropped, the id is mapped', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.targetInfo(true, { objPtr: 8, funPtr: 8 });
    s.record(61, w().uint(0x40e190, 8).str('Philo_inst[2]').toBytes());
    s.record(62, w().uint(0x4012f2, 8).str('BSP_random').toBytes());
    s.record(54, w().u8(3).u8(7).str('CMD_B').toBytes());
    s.fe([1, 136, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...name0('Philo_inst[2]')]);
    s.fe([2, 137, 6, 0, 0, 0, 0, 0, 0, 0, 0, ...name0('Philo_inst[2]')]);
    s.fe([3, 139, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, ...name0('BSP_random')]);
    s.fe([4, 138, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, ...name0('CMD_B')]);
    const addr = [0x90, 0xe1, 0x40, 0, 0, 0, 0, 0];
    expect(s.frames).toEqual([
      hex(encodeFrame(1, 12, Uint8Array.from([0, ...addr]))),
      hex(encodeFrame(2, 13, Uint8Array.from([6, ...addr]))),
      hex(encodeFrame(3, 9, Uint8Array.from([0x34, 0x12, 0, 0, 0xf2, 0x12, 0x40, 0, 0, 0, 0, 0]))),
      hex(encodeFrame(4, 1, Uint8Array.from([3, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0]))),
    ]);
    expect(s.textLines()).toEqual([]);
  });

  it('21: unknown object, function and command names: the exact lines, nothing on the target link', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0x80, 2]);
    s.fe([1, 136, 0, 0, 0, 0, 0, ...name0('nope')]);
    s.fe([2, 137, 0, 0, 0, 0, 0, ...name0('Philo_inst[2]')]);
    s.fe([3, 139, 0x7b, 0, 0, 0, 0, 0, 0, 0, ...name0('foo')]);
    s.fe([4, 138, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, ...name0('CMD_X')]);
    expect(s.to().slice(1)).toEqual([
      text(2, 136, Lines.noObject('nope')),
      text(3, 137, Lines.noObject('Philo_inst[2]')),
      text(4, 139, Lines.noFunction('foo')),
      text(5, 138, Lines.noCommand('CMD_X')),
    ]);
    expect(s.frames).toEqual([]);
  });

  it('22: SEND_EVENT with an unknown name sends signal 0; a 1-character name is "incorrect"', () => {
    const s = session();
    s.target.targetConnected();
    s.fe([0, 0x80, 2]);
    s.fe([1, 135, 253, 0, 0, 0, 0, ...name0('NO_SUCH_SIG')]);
    s.fe([2, 135, 253, 0, 0, 0, 0, ...name0('X')]);
    expect(s.frames).toEqual([hex(encodeFrame(1, 16, Uint8Array.of(253, 0, 0, 0, 0)))]);
    expect(s.to().slice(1)).toEqual([text(2, 135, Lines.incorrect('SEND_EVENT'))]);
  });

  it('23: an object-scoped signal resolves only after a by-name SEND_CURR_OBJ of kind SM/AO/SM_AO of its object', () => {
    const s = session();
    s.targetInfo(true);
    s.record(60, w().u16(5).u32(0x1000).str('LOCAL_SIG').toBytes());
    s.record(60, w().u16(6).u32(0x2000).str('LOCAL_SIG').toBytes());
    s.record(61, w().u32(0x1000).str('ao_A').toBytes());
    s.record(61, w().u32(0x2000).str('ao_B').toBytes());
    const event = (seq: number) => s.fe([seq, 135, 255, 0, 0, 0, 0, ...name0('LOCAL_SIG')]);
    const sigs = () => s.frames.filter((f) => f.slice(2, 4) === '10').map((f) => f.slice(6, 10));
    event(0);
    s.fe([1, 13, 0, 0, 0x10, 0, 0]); // numeric CURR_OBJ: no scope
    event(2);
    s.fe([3, 137, 2, 0, 0, 0, 0, ...name0('ao_B')]); // kind MP: no scope
    event(4);
    s.fe([5, 137, 0, 0, 0, 0, 0, ...name0('ao_B')]);
    event(6);
    s.fe([7, 137, 1, 0, 0, 0, 0, ...name0('ao_A')]);
    event(8);
    s.fe([9, 137, 6, 0, 0, 0, 0, ...name0('ao_B')]);
    event(10);
    expect(sigs()).toEqual(['0000', '0000', '0000', '0600', '0500', '0600']);
  });

  it('24: SEND_COMMAND names come from the QS_CMD enumeration from version 7.1.4, from the user dictionary below', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.targetInfo(true, { version: 740 });
    s.record(54, w().u8(3).u8(7).str('MY_CMD').toBytes());
    s.record(63, w().u8(101).str('MY_USR_REC').toBytes());
    const command = (seq: number, name: string) => s.fe([seq, 138, 0, ...new Array(12).fill(0), ...name0(name)]);
    command(1, 'MY_CMD');
    command(2, 'MY_USR_REC');
    s.targetInfo(true, { version: 700 });
    s.record(63, w().u8(101).str('MY_USR_REC').toBytes());
    command(3, 'MY_USR_REC');
    command(4, 'MY_CMD');
    expect(s.frames.map((f) => f.slice(0, 6))).toEqual(['010103', '010165']);
    expect(s.textLines()).toEqual([
      text(2, 138, Lines.noCommand('MY_USR_REC')),
      text(3, 138, Lines.noCommand('MY_CMD')),
    ]);
  });

  it('25: dictionaries are emptied by a reset target info and by a changed configuration', () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.targetInfo(true);
    s.record(61, w().u32(0x2000).str('ao_B').toBytes());
    const curr = (seq: number, size: number) => s.fe([seq, 137, 0, ...new Array(size).fill(0), ...name0('ao_B')]);
    curr(1, 4);
    s.targetInfo(false); // the same configuration: kept
    curr(2, 4);
    s.targetInfo(false, { objPtr: 8 }); // another configuration: discarded
    curr(3, 8);
    s.record(61, w().uint(0x2000, 8).str('ao_B').toBytes());
    curr(4, 8);
    s.targetInfo(true, { objPtr: 8 }); // a reset: discarded
    curr(5, 8);
    expect(s.frames.map((f) => f.slice(0, 4))).toEqual(['010d', '020d', '030d']);
    expect(s.textLines()).toEqual([text(2, 137, Lines.noObject('ao_B')), text(3, 137, Lines.noObject('ao_B'))]);
  });

  it("26: SAVE_DICT and SEQUENCE_OUT answer qspy's lines; SHOW_NOTE, CLEAR_SCREEN, TEXT_OUT, BIN_OUT answer nothing", () => {
    const s = session();
    s.fe([0, 0x80, 2]);
    s.fe([1, 130]);
    s.fe([2, 134]);
    s.fe([3, 141, 0xff, ...name0('hello note')]);
    s.fe([4, 140]);
    s.fe([5, 131, 1]);
    s.fe([6, 132, 1]);
    s.fe([7, 133]);
    expect(s.to()).toEqual(['0180', text(2, 130, Lines.noDictionaryFile), text(3, 134, Lines.noSequenceList)]);
  });
});
