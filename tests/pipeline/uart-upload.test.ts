// The trace box's UART upload (reference §3.1) on an STP link, against a device simulator that
// plays the device's side over the link's TCP connection, and over a serial link on a
// pseudo-terminal: success, a device that never answers, a wrong bit rate, a missing
// acknowledgement; through the API, NATS and the CLI.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type App, buildApp } from '@tracehub/api';
import { requestControl } from '@tracehub/bus';
import { getLinkByName, upsertLink } from '@tracehub/db';
import { Gateway, SerialSource, TcpListenSource } from '@tracehub/link';
import { freePort, natsUrl, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN, testApiSettings } from '../api/fixture-data.js';
import { PtyUploadDevice } from '../support/pty-upload-device.js';
import { type DeviceBehaviour, UploadDevice } from '../support/stp-upload-device.js';
import { type TestBackends, testBackends } from '../support/test-backends.js';
import { CLI } from './harness.js';

const RIG = 'rigUp';
let backends: TestBackends;
let app: App;
let gateway: Gateway;
let port: number;
let linkId: number;
let work: string;

beforeAll(async () => {
  backends = await testBackends('upload', { topology: true });
  app = await buildApp({ db: backends.db, bus: backends.bus, settings: testApiSettings() });
  port = await freePort();
  await upsertLink(backends.db, { rig: RIG, name: 'uart', protocol: 'stp' });
  linkId = (await getLinkByName(backends.db, RIG, 'uart'))!.id;
  gateway = new Gateway({
    bus: backends.bus,
    link: { protocol: 'stp', rig: RIG, link: 'uart' },
    source: new TcpListenSource('127.0.0.1', port, { idleTimeoutMs: 0 }),
  });
  await gateway.start();
  work = mkdtempSync(join(tmpdir(), 'th-upload-'));
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await app?.close();
  await backends?.close();
  rmSync(work, { recursive: true, force: true });
});

/** A device of `behaviour` connected to the link, once its session has begun. */
async function device(behaviour: DeviceBehaviour): Promise<UploadDevice> {
  const before = gateway.publisher.sessions.length;
  const d = await UploadDevice.connect(port, behaviour);
  await waitUntil(async () => gateway.publisher.sessions.length > before, 5000, 'the device session');
  return d;
}

async function upload(data: Buffer, id = linkId) {
  const res = await app.inject({
    method: 'POST',
    url: `/api/v1/links/${id}/upload`,
    headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    payload: { data: data.toString('base64') },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7) & 0xff));

describe('the UART upload of an STP link', () => {
  it('uploads: break, the bit rate (115200 b/s, set as 48 MHz / 417), the length acknowledged, the data acknowledged', async () => {
    const d = await device({ kind: 'answers', bitRate: 115_200 });
    const r = await upload(payload);
    expect(r).toMatchObject({ ok: true, outcome: 'uploaded', error: '', bitRate: 115_200, bytes: payload.length });
    expect(r.setBitRate).toBeCloseTo(48_000_000 / 417, 6);
    expect(d.breaks).toBe(1);
    expect(d.lengthSeen).toBe(payload.length);
    expect(d.data.equals(payload)).toBe(true);
    d.socket.destroy();
  });

  it('takes the obsolete ASCII bit rate (the reference example 2285714.286: 48 MHz / 21)', async () => {
    const d = await device({ kind: 'ascii', text: '2285714.286' });
    const r = await upload(payload.subarray(0, 10));
    expect(r).toMatchObject({ ok: true, outcome: 'uploaded', bitRate: 2285714.286 });
    expect(d.data.equals(payload.subarray(0, 10))).toBe(true);
    d.socket.destroy();
  });

  it('a device that never answers the break: no-bit-rate after 2 s, and no length sent', async () => {
    const d = await device({ kind: 'silent' });
    const r = await upload(payload);
    expect(r).toMatchObject({ ok: false, outcome: 'no-bit-rate', bitRate: null, bytes: 0 });
    expect(r.error).toMatch(/no bit rate within 2000 ms/);
    expect(r.ms).toBeGreaterThanOrEqual(2000);
    expect(d.breaks).toBe(1);
    expect(d.lengthSeen).toBeNull();
    d.socket.destroy();
  });

  it('a wrong bit rate: 5 Mb/s is 4 % off the nearest the UART makes (4.8 Mb/s), 50 b/s below the least', async () => {
    const d = await device({ kind: 'answers', bitRate: 5_000_000 });
    const r = await upload(payload);
    expect(r).toMatchObject({ ok: false, outcome: 'bit-rate-deviation', bitRate: 5_000_000, setBitRate: null });
    expect(r.error).toMatch(/4800000\.0 \(4\.00 % off, at most 2 %\)/);
    expect(d.lengthSeen).toBeNull();
    d.socket.destroy();
    const slow = await device({ kind: 'answers', bitRate: 50 });
    const r2 = await upload(payload);
    expect(r2).toMatchObject({ ok: false, outcome: 'bit-rate-too-low', bitRate: 50 });
    expect(slow.lengthSeen).toBeNull();
    slow.socket.destroy();
  });

  it('a missing acknowledgement of the length: no-length-ack after 100 ms, no data sent', async () => {
    const d = await device({ kind: 'no-length-ack', bitRate: 115_200 });
    const r = await upload(payload);
    expect(r).toMatchObject({ ok: false, outcome: 'no-length-ack', bytes: 0 });
    expect(r.error).toMatch(/length within 100 ms/);
    expect(d.lengthSeen).toBe(payload.length);
    expect(d.data.length).toBe(0);
    d.socket.destroy();
  });

  it('a missing acknowledgement of the data: no-data-ack, from tracehub link upload (exit 1)', async () => {
    const d = await device({ kind: 'no-data-ack', bitRate: 115_200 });
    const file = join(work, 'data.bin');
    writeFileSync(file, payload);
    // Run apart (not spawnSync): this process is the gateway, and must go on answering.
    const run = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, 'link', 'upload', '--rig', RIG, '--link', 'uart', file], {
        env: { ...process.env, NATS_URL: natsUrl(), TRACEHUB_BUS_PREFIX: backends.bus.names.prefix },
      });
      let stderr = '';
      child.stderr.on('data', (b: Buffer) => {
        stderr += b.toString();
      });
      child.on('close', (status) => resolve({ status, stderr }));
    });
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/upload failed \(no-data-ack\): the device did not acknowledge the data within 100 ms/);
    expect(d.data.equals(payload)).toBe(true);
    d.socket.destroy();
    // And the same device's next upload over NATS directly: the same outcome in the reply.
    const d2 = await device({ kind: 'answers', bitRate: 921_600 });
    const reply = await requestControl(backends.bus, { rig: RIG, link: 'uart' }, { upload: payload }, 10_000);
    expect(reply.ok).toBe(true);
    expect(reply.result).toMatchObject({ outcome: 'uploaded', bitRate: 921_600 });
    d2.socket.destroy();
  });

  it('an SWD link: the data sent as one SWD frame (§3.2.5), escaped and padded to 4-byte words', async () => {
    await upsertLink(backends.db, { rig: RIG, name: 'swd', protocol: 'swd' });
    const swdId = (await getLinkByName(backends.db, RIG, 'swd'))!.id;
    const swdPort = await freePort();
    const swd = new Gateway({
      bus: backends.bus,
      link: { protocol: 'swd', rig: RIG, link: 'swd' },
      source: new TcpListenSource('127.0.0.1', swdPort, { idleTimeoutMs: 0 }),
    });
    await swd.start();
    try {
      const socket = connect({ host: '127.0.0.1', port: swdPort });
      const got: Buffer[] = [];
      socket.on('data', (b: Buffer) => got.push(b));
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      socket.write(Buffer.from([0x00]));
      await waitUntil(async () => swd.publisher.sessions.length > 0, 5000, 'the SWD session');
      const res = await app.inject({
        method: 'POST',
        url: `/api/v1/links/${swdId}/upload`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
        payload: { data: Buffer.from([0x01, 0xc0, 0x7d, 0xc1, 0x02]).toString('base64') },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ ok: true, outcome: 'uploaded', bytes: 5 });
      // START, 01, C0 -> 7D E0, 7D -> 7D 5D, C1 -> 7D E1, 02, END, then END to a whole word.
      const expected = Buffer.from('c0017de07d5d7de102c1c1c1', 'hex');
      await waitUntil(async () => Buffer.concat(got).length >= expected.length, 5000, 'the frame');
      expect(Buffer.concat(got).toString('hex')).toBe(expected.toString('hex'));
      socket.destroy();
    } finally {
      await swd.stop();
    }
  });
});

describe('the UART upload of a serial STP link, the device on a pseudo-terminal', () => {
  let pty: PtyUploadDevice;
  let serial: Gateway;
  let serialId: number;
  /** 48 MHz / 417, as the port is set for 115 200 b/s (serialport rounds it to a whole b/s). */
  const SET_115200 = Math.round(48_000_000 / 417);

  beforeAll(async () => {
    pty = await PtyUploadDevice.start();
    await upsertLink(backends.db, { rig: RIG, name: 'serial', protocol: 'stp' });
    serialId = (await getLinkByName(backends.db, RIG, 'serial'))!.id;
    serial = new Gateway({
      bus: backends.bus,
      link: { protocol: 'stp', rig: RIG, link: 'serial' },
      source: new SerialSource(pty.path, 9600, { binding: pty.binding }),
    });
    await serial.start();
    await waitUntil(async () => serial.publisher.target !== undefined, 10_000, 'the port opened');
    pty.behave({ kind: 'silent' });
    await waitUntil(async () => serial.publisher.sessions.length > 0, 10_000, 'the serial session');
  }, 30_000);

  afterAll(async () => {
    await serial?.stop();
    await pty?.stop();
  });

  it('uploads: a break of 200 ms at the link rate, then length and data at the rate the device asked for', async () => {
    pty.behave({ kind: 'answers', bitRate: 115_200 });
    const r = await upload(payload, serialId);
    expect(r).toMatchObject({ ok: true, outcome: 'uploaded', error: '', bitRate: 115_200, bytes: payload.length });
    await waitUntil(async () => pty.seen('data').length === 1, 5000, 'the data at the device');
    const [brk] = pty.seen('break');
    expect(pty.seen('break')).toHaveLength(1);
    expect(brk.heldMs).toBeGreaterThanOrEqual(199);
    expect(brk.bitRate).toBe(9600);
    expect(pty.seen('length')).toEqual([{ event: 'length', length: payload.length, bitRate: SET_115200 }]);
    const [data] = pty.seen('data');
    expect(Buffer.from(data.hex, 'hex').equals(payload)).toBe(true);
    expect(data.bitRate).toBe(SET_115200);
    expect(pty.seen('stray')).toEqual([]);
  });

  it('takes the obsolete ASCII bit rate: the port set to 48 MHz / 21', async () => {
    pty.behave({ kind: 'ascii', text: '2285714.286' });
    const r = await upload(payload.subarray(0, 10), serialId);
    expect(r).toMatchObject({ ok: true, outcome: 'uploaded', bitRate: 2285714.286 });
    await waitUntil(async () => pty.seen('data').length === 1, 5000, 'the data at the device');
    expect(pty.seen('data')[0]).toEqual({
      event: 'data',
      hex: payload.subarray(0, 10).toString('hex'),
      bitRate: Math.round(48_000_000 / 21),
    });
  });

  it('a device that never answers the break: no-bit-rate after 2 s, nothing more sent', async () => {
    pty.behave({ kind: 'silent' });
    const r = await upload(payload, serialId);
    expect(r).toMatchObject({ ok: false, outcome: 'no-bit-rate', bitRate: null, bytes: 0 });
    expect(r.error).toMatch(/no bit rate within 2000 ms/);
    expect(r.ms).toBeGreaterThanOrEqual(2000);
    expect(pty.seen('break')).toHaveLength(1);
    expect(pty.seen('length')).toEqual([]);
    expect(pty.seen('stray')).toEqual([]);
  });

  it('a wrong bit rate: 5 Mb/s (4 % off what the UART makes) and 50 b/s (below the least) leave the port as it was', async () => {
    pty.behave({ kind: 'answers', bitRate: 115_200 });
    expect((await upload(payload.subarray(0, 4), serialId)).ok).toBe(true);
    pty.behave({ kind: 'answers', bitRate: 5_000_000 });
    const r = await upload(payload, serialId);
    expect(r).toMatchObject({ ok: false, outcome: 'bit-rate-deviation', bitRate: 5_000_000, setBitRate: null });
    pty.behave({ kind: 'answers', bitRate: 50 });
    const r2 = await upload(payload, serialId);
    expect(r2).toMatchObject({ ok: false, outcome: 'bit-rate-too-low', bitRate: 50, setBitRate: null });
    // A break for each; the port still at the rate of the last upload; no length.
    await waitUntil(async () => pty.seen('break').length === 1, 5000, 'the break at the device');
    expect(pty.seen('break')[0].bitRate).toBe(SET_115200);
    expect(pty.seen('length')).toEqual([]);
    expect(pty.seen('stray')).toEqual([]);
  });

  it('a missing acknowledgement of the length: no-length-ack after 100 ms, no data sent', async () => {
    pty.behave({ kind: 'no-length-ack', bitRate: 1_000_000 });
    const r = await upload(payload, serialId);
    expect(r).toMatchObject({ ok: false, outcome: 'no-length-ack', bitRate: 1_000_000, bytes: 0 });
    expect(r.error).toMatch(/length within 100 ms/);
    await waitUntil(async () => pty.seen('length').length === 1, 5000, 'the length at the device');
    expect(pty.seen('length')[0]).toEqual({ event: 'length', length: payload.length, bitRate: 1_000_000 });
    expect(pty.seen('data')).toEqual([]);
  });

  it('a missing acknowledgement of the data: no-data-ack after 100 ms, all the data sent', async () => {
    pty.behave({ kind: 'no-data-ack', bitRate: 921_600 });
    const r = await upload(payload, serialId);
    expect(r).toMatchObject({ ok: false, outcome: 'no-data-ack', bitRate: 921_600, bytes: 0 });
    expect(r.error).toMatch(/data within 100 ms/);
    await waitUntil(async () => pty.seen('data').length === 1, 5000, 'the data at the device');
    expect(Buffer.from(pty.seen('data')[0].hex, 'hex').equals(payload)).toBe(true);
    expect(pty.seen('data')[0].bitRate).toBe(Math.round(48_000_000 / 52));
  });

  it("the system's own serial binding on a pseudo-terminal: the break fails (no modem lines), write-failed", async () => {
    const plain = await PtyUploadDevice.start();
    await upsertLink(backends.db, { rig: RIG, name: 'plainSerial', protocol: 'stp' });
    const plainId = (await getLinkByName(backends.db, RIG, 'plainSerial'))!.id;
    const gw = new Gateway({
      bus: backends.bus,
      link: { protocol: 'stp', rig: RIG, link: 'plainSerial' },
      source: new SerialSource(plain.path, 9600),
    });
    await gw.start();
    try {
      await waitUntil(async () => gw.publisher.target !== undefined, 10_000, 'the port opened');
      plain.behave({ kind: 'answers', bitRate: 115_200 });
      await waitUntil(async () => gw.publisher.sessions.length > 0, 10_000, 'the session');
      const r = await upload(payload, plainId);
      expect(r).toMatchObject({ ok: false, outcome: 'write-failed', bytes: 0 });
      expect(r.error).toMatch(/^break: .*Inappropriate ioctl for device/);
      expect(plain.events.filter((e) => e.event !== 'stray')).toEqual([]);
    } finally {
      await gw.stop();
      await plain.stop();
    }
  });
});
