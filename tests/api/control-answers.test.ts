// Control with the target's answers, names and target sizes, through the real gateway and a
// scripted QS target on its TCP link, with a qspy-compatible front-end attached over UDP at
// the same time: one QS-RX counter, one set of dictionaries, the front-end port's state.
import { createSocket, type Socket } from 'node:dgram';
import { type App, buildApp } from '@tracehub/api';
import type { Bus } from '@tracehub/bus';
import type { Database } from '@tracehub/db';
import type { ScriptedTarget } from '@tracehub/qspy-frontend';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredFixture } from '../support/qs-fixture-session.js';
import { type ControlBackends, controlBackends, type ScriptedQsLink } from '../support/scripted-qs-link.js';
import { CONTROL_TOKEN, READ_TOKEN, testApiSettings } from './fixture-data.js';

let backends: ControlBackends;
let db: Kysely<Database>;
let bus: Bus;
let app: App;
let link: ScriptedQsLink;
let scripted: ScriptedTarget;
let stored: StoredFixture;
let fe: Socket;
const fromPort: Buffer[] = [];

beforeAll(async () => {
  backends = await controlBackends('ctla', 'rig4', 'uart1');
  ({ db, bus, stored, link } = backends);
  scripted = link.scripted;
  app = await buildApp({ db, bus, settings: testApiSettings({ controlTimeoutMs: 2000 }) });
  fe = createSocket('udp4');
  fe.on('message', (m) => fromPort.push(m));
  await new Promise<void>((r) => fe.bind(0, '127.0.0.1', () => r()));
});

afterAll(async () => {
  fe?.close();
  await app?.close();
  await backends?.close();
});

async function command(body: object, token = CONTROL_TOKEN) {
  return app.inject({
    method: 'POST',
    url: `/api/v1/links/${stored.linkId}/commands`,
    headers: { authorization: `Bearer ${token}` },
    payload: body,
  });
}

async function feSend(bytes: number[]): Promise<void> {
  const port = link.frontEndPort;
  await new Promise<void>((r) => fe.send(Uint8Array.from(bytes), port, '127.0.0.1', () => r()));
}

async function datagrams(n: number): Promise<string[]> {
  for (let i = 0; i < 200 && fromPort.length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return fromPort.splice(0).map((d) => (d[1] === 0 ? `text ${d.subarray(3).toString('latin1')}` : d.toString('hex')));
}

describe('control answers from the target', () => {
  it('resolves names from the link dictionaries and returns the matched answer', async () => {
    const filter = await command({ command: { command: 'aoFilter', object: 'l_philo' } });
    expect(filter.statusCode, filter.body).toBe(200);
    expect(filter.json()).toMatchObject({
      ok: true,
      outcome: 'ack',
      resolved: { l_philo: '0x20001000' },
      answer: { name: 'QS_RX_STATUS', text: '           Trg-Ack  QS_RX_AO_FILTER' },
    });
    const ev = await command({ command: { command: 'event', prio: 0, sig: 'EAT_SIG', params: [2] } });
    expect(ev.json()).toMatchObject({ ok: true, outcome: 'done', resolved: { EAT_SIG: '7' } });
    expect(ev.json().text).toEqual([
      '           Trg-Ack  QS_RX_EVENT',
      '0000000000 USER+000 16',
      '0000000001 Trg-Done QS_RX_EVENT',
    ]);
    const cmd = await command({ command: { command: 'command', cmdId: 'MY_CMD', p1: 1 } });
    expect(cmd.json()).toMatchObject({ ok: true, outcome: 'done', resolved: { MY_CMD: '3' } });
    const unknown = await command({ command: { command: 'currentObject', kind: 'SM', object: 'nope' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toBe(
      "body command.object: no object named 'nope' in the link's dictionaries (give its address)",
    );
  });

  it('every QS-RX command is reachable, with group filter names', async () => {
    const cases: [object, string][] = [
      [{ command: 'globalFilter', records: ['SM', 'AO', 'U0'] }, 'ack'],
      [{ command: 'localFilter', qsIds: ['ALL'] }, 'ack'],
      [{ command: 'currentObject', kind: 'AP', object: 'l_table' }, 'ack'],
      [{ command: 'peek', offset: 0, size: 4, num: 2 }, 'data'],
      [{ command: 'poke', offset: 0, size: 1, items: [1, 2] }, 'ack'],
      [{ command: 'fill', offset: 0, size: 2, num: 3, value: '0xBEEF' }, 'ack'],
      [{ command: 'queryCurrent', kind: 'SM' }, 'data'],
      [{ command: 'testSetup' }, 'ack'],
      [{ command: 'testProbe', function: '0x08001234', data: 7 }, 'ack'],
      [{ command: 'testContinue' }, 'ack'],
      [{ command: 'testTeardown' }, 'ack'],
      [{ command: 'tick', rate: 0 }, 'done'],
      [{ command: 'info' }, 'data'],
    ];
    for (const [c, outcome] of cases) {
      const res = await command({ command: c });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json(), JSON.stringify(c)).toMatchObject({ ok: true, outcome });
    }
  });

  it('validates values against the target sizes and field widths: 400 naming the field and the range', async () => {
    const before = scripted.received.length;
    const cases: [object, string][] = [
      [
        { command: 'currentObject', kind: 'SM', address: '0x1122334455667788' },
        "body command.address: 0x1122334455667788 is out of range: 0..0xFFFFFFFF (the target's object pointers are 4 bytes)",
      ],
      [
        { command: 'command', cmdId: 1, p1: '99999999999999999999' },
        'body command.p1: 99999999999999999999 is out of range: 0..0xFFFFFFFF (32 bits)',
      ],
      [
        { command: 'poke', offset: 0, size: 1, items: [511, 70000] },
        "body command.items[0]: 511 is out of range: 0..255 (the target's items are 1 byte)",
      ],
      [
        { command: 'fill', offset: 0, size: 2, num: 1, value: 4294967295 },
        "body command.value: 4294967295 is out of range: 0..65535 (the target's items are 2 bytes)",
      ],
      [{ command: 'peek', offset: 0, size: 3, num: 1 }, 'body command.size: must be 1, 2 or 4 (bytes per item), not 3'],
      [
        { command: 'peek', offset: 70000, size: 1, num: 1 },
        'body command.offset: Expected integer to be less or equal to 65535',
      ],
      [{ command: 'tick', rate: 0, extra: 1 }, 'body command.extra: Unexpected property'],
      [{ command: 'jump' }, expect.stringMatching(/^body command.command: /) as unknown as string],
    ];
    for (const [c, detail] of cases) {
      const res = await command({ command: c });
      expect(res.statusCode, JSON.stringify(c)).toBe(400);
      expect(res.json().detail).toEqual(detail);
      expect(res.json().detail.length).toBeLessThan(200);
    }
    expect(scripted.received.length).toBe(before);
  });

  it('needs the control scope', async () => {
    const res = await command({ command: { command: 'info' } }, READ_TOKEN);
    expect(res.statusCode).toBe(403);
  });

  it('shares the link with an attached front-end: one QS-RX counter, and the port shows who is attached', async () => {
    fromPort.length = 0;
    await feSend([0, 0x80, 2]); // qutest-style attach: text only
    expect(await datagrams(1)).toEqual(['0180']);
    const status = await app.inject({
      method: 'GET',
      url: `/api/v1/links/${stored.linkId}/control`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(status.statusCode, status.body).toBe(200);
    expect(status.json()).toMatchObject({
      targetConnected: true,
      target: { objPtrSize: 4, fromTarget: true },
      dictionaries: { objects: 2, signals: 1, commands: 1 },
      frontEnd: { peer: { address: '127.0.0.1', port: fe.address().port }, channels: 2 },
    });

    const seqBefore = (await command({ command: { command: 'testSetup' } })).json().rxSeq as number;
    // The front-end's command takes the next number on the same counter...
    await feSend([1, 0x03, 0]);
    expect(await datagrams(4)).toEqual([
      'text            Trg-Ack  QS_RX_TEST_SETUP',
      'text            Trg-Ack  QS_RX_TICK',
      expect.stringMatching(/^text \d{10} USER\+000 3$/),
      expect.stringMatching(/^text \d{10} Trg-Done QS_RX_TICK$/),
    ]);
    // ... and tracehub's next command the one after.
    const after = await command({ command: { command: 'testTeardown' } });
    expect(after.json()).toMatchObject({ ok: true, rxSeq: seqBefore + 2 });
    expect(scripted.received.slice(-3).map((f) => f.seq)).toEqual([seqBefore, seqBefore + 1, seqBefore + 2]);

    // An operator frees the port: the holder gets DETACH.
    const release = await app.inject({
      method: 'POST',
      url: `/api/v1/links/${stored.linkId}/frontend/release`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    });
    expect(release.json()).toMatchObject({ released: true, frontEnd: { peer: null } });
    expect((await datagrams(2)).slice(-1)[0]).toMatch(/^[0-9a-f]{2}81$/);
  });

  it('serialises commands from the front-end port and from the api sent at once: each gets its own answer', async () => {
    const target = link.gateway.qsPoint!.target;
    const written = async (seq: number) => {
      for (let i = 0; i < 200 && target.lastRxSeq !== seq; i++) await new Promise((r) => setTimeout(r, 5));
      expect(target.lastRxSeq).toBe(seq);
    };
    expect((await command({ command: { command: 'currentObject', kind: 'AP', object: 'l_table' } })).json().ok).toBe(
      true,
    );
    fromPort.length = 0;
    await feSend([0, 0x80, 2]);
    expect(await datagrams(1)).toEqual(['0180']);

    // The target reads nothing until both frames are on its link; then it answers them in order.
    const s = target.lastRxSeq;
    link.socket.pause();
    await feSend([1, 0x04, 0, 0, 3, 1]); // a peek of 3-byte items: the target answers Trg-ERR
    await written((s + 1) & 0xff);
    const peek = command({ command: { command: 'peek', offset: 0, size: 4, num: 1 } });
    await written((s + 2) & 0xff);
    link.socket.resume();
    expect((await peek).json()).toMatchObject({
      ok: true,
      outcome: 'data',
      rxSeq: (s + 2) & 0xff,
      answer: { name: 'QS_PEEK_DATA' },
    });
    expect(await datagrams(2)).toEqual([
      'text            Trg-ERR  QS_RX_PEEK',
      expect.stringMatching(/^text \d{10} Trg-Peek Offs=0,Size=4,Num=1,Data=<03020100>$/),
    ]);

    // The same command from both: the api's answer is the second Trg-Done, not the front-end's.
    link.socket.pause();
    await feSend([2, 0x03, 0]);
    await written((s + 3) & 0xff);
    const tick = command({ command: { command: 'tick', rate: 0 } });
    await written((s + 4) & 0xff);
    link.socket.resume();
    const answer = (await tick).json();
    expect(answer).toMatchObject({ ok: true, outcome: 'done', rxSeq: (s + 4) & 0xff });
    const lines = await datagrams(6);
    expect(lines.filter((l) => l.includes('Trg-Done'))).toHaveLength(2);
    expect(`text ${answer.answer.text}`).toBe(lines[5]);
    expect(lines[2]).not.toBe(lines[5]);
    // Whole frames, in order, each with the next sequence number: no checksum or gap errors.
    expect(scripted.received.slice(-4).map((f) => [f.seq, f.id])).toEqual([
      [(s + 1) & 0xff, 4],
      [(s + 2) & 0xff, 4],
      [(s + 3) & 0xff, 3],
      [(s + 4) & 0xff, 3],
    ]);
    expect(lines.some((l) => l.includes('Trg-ERR'))).toBe(false);
  });
});
