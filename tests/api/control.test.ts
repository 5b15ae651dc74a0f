import net from 'node:net';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { ScriptedTarget } from '@tracehub/qspy-frontend';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishLive } from '../support/publish-live.js';
import { type StoredFixture, storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { CONTROL_TOKEN } from './fixture-data.js';

let api: TestApi;
let gateway: Gateway;
let target: net.Socket;
let stored: StoredFixture;
const arrived: Buffer[] = [];
let scripted: ScriptedTarget;

beforeAll(async () => {
  api = await testApi('ctl', { topology: true, settings: { controlTimeoutMs: 2000 } });
  const { db, bus } = api;
  // The link's last session came from a target with 8-byte pointers and 2-byte signals.
  stored = await storeQsFixture(db, 'dpp_qv', { rig: 'rig9', link: 'uart0', session: 's-ctl', startNs: T0 });
  const source = new TcpListenSource('127.0.0.1', 0);
  gateway = new Gateway({ bus, link: { protocol: 'qs', rig: 'rig9', link: 'uart0' }, source, flushMs: 5 });
  await gateway.start();
  target = net.connect(source.boundPort, '127.0.0.1');
  await new Promise((resolve) => target.once('connect', resolve));
  target.on('data', (d) => arrived.push(d));
  // The target answers as a QP/C QUTest target does (it has not sent its target info yet).
  scripted = new ScriptedTarget((bytes) => target.write(bytes), { objPtrSize: 8, funPtrSize: 8 });
  target.on('data', (d) => scripted.receive(d));
});

afterAll(async () => {
  target?.destroy();
  await gateway?.stop(1000);
  await api?.close();
});

/** A QS frame as the spec lays it out: seq, id, payload, checksum (~sum), escaped, then the 0x7E flag. */
function qsFrame(seq: number, id: number, payload: number[]): Buffer {
  const body = [seq, id, ...payload];
  body.push(~body.reduce((a, b) => a + b, 0) & 0xff);
  const out: number[] = [];
  for (const b of body) {
    if (b === 0x7e || b === 0x7d) out.push(0x7d, b ^ 0x20);
    else out.push(b);
  }
  out.push(0x7e);
  return Buffer.from(out);
}

async function command(body: object) {
  return api.app.inject({
    method: 'POST',
    url: `/api/v1/links/${stored.linkId}/commands`,
    headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    payload: body,
  });
}

async function arrivedBytes(n: number): Promise<Buffer> {
  for (let i = 0; i < 200 && Buffer.concat(arrived).length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return Buffer.concat(arrived.splice(0));
}

describe('control', () => {
  it('writes the exact QS-RX frames to the target through the gateway and returns its reply', async () => {
    const info = await command({ command: { command: 'info' } });
    expect(info.statusCode, info.body).toBe(200);
    const expectedInfo = qsFrame(1, 0, []);
    expect(await arrivedBytes(expectedInfo.length)).toEqual(expectedInfo);
    expect(info.json()).toMatchObject({
      ok: true,
      written: expectedInfo.length,
      session: gateway.publisher.currentSession,
      frame: expectedInfo.toString('hex'),
      records: [],
      // The target's own answer, decoded from what it sent back on the link.
      outcome: 'data',
      answer: { name: 'QS_TARGET_INFO', fields: { reset: false, objPtrSize: 8 } },
    });

    // Poke writes 2-byte items; 0x7E and 0x7D in the payload go escaped. The target has no
    // current AP object, so it refuses: Trg-ERR is not ok.
    const poke = await command({ command: { command: 'poke', offset: 4, size: 2, items: [0xbeef, 0x7e7d] } });
    expect(poke.statusCode, poke.body).toBe(200);
    expect(await arrivedBytes(14)).toEqual(qsFrame(2, 5, [0x04, 0x00, 0x02, 0x02, 0xef, 0xbe, 0x7d, 0x7e]));
    expect(poke.json()).toMatchObject({
      ok: false,
      outcome: 'error',
      error: 'the target refused it: Trg-ERR  QS_RX_POKE',
      answer: { name: 'QS_RX_STATUS', text: '           Trg-ERR  QS_RX_POKE' },
    });

    // An event with the target's 2-byte signal size (from the session's target info), no parameters.
    await command({ command: { command: 'event', prio: 1, sig: 6 } });
    expect(await arrivedBytes(9)).toEqual(qsFrame(3, 16, [0x01, 0x06, 0x00, 0x00, 0x00]));

    // Current object with the target's 8-byte pointers.
    await command({ command: { command: 'currentObject', kind: 5, address: '0x40EBA0' } });
    expect(await arrivedBytes(12)).toEqual(qsFrame(4, 13, [5, 0xa0, 0xeb, 0x40, 0, 0, 0, 0, 0]));
  });

  it('returns what the link produced during the reply window', async () => {
    // Stand in for the decoder: when the target receives the reset, the link's next records appear on rec.qs.rig9.uart0.
    const answer = stored.records.find((r) => r.name === 'QS_TARGET_INFO')!;
    target.once('data', () => {
      publishLive(api.bus, [{ ...answer, session: 'after-reset', seq: 0 }], 0);
    });
    const res = await command({ command: { command: 'reset' }, replyWindowMs: 300 });
    expect(res.statusCode, res.body).toBe(200);
    expect(await arrivedBytes(4)).toEqual(qsFrame(5, 2, []));
    expect(res.json().records).toEqual([{ ...answer, session: 'after-reset', seq: 0 }]);
    // The gateway's own answer: the target info the scripted target sent when it reset.
    expect(res.json()).toMatchObject({ ok: true, outcome: 'data', answer: { fields: { reset: true } } });
  });

  it('says so when the target is not connected or no gateway answers', async () => {
    target.destroy();
    for (let i = 0; i < 100 && gateway.publisher.currentSession !== undefined; i++)
      await new Promise((r) => setTimeout(r, 10));
    const res = await command({ command: { command: 'tick' } });
    expect(res.statusCode).toBe(502);
    expect(res.json().detail).toMatch(/could not write to the target: the target is not connected/);
    await gateway.stop(1000);
    const none = await command({ command: { command: 'tick' } });
    expect(none.statusCode).toBe(503);
    expect(none.json().detail).toMatch(/no gateway serves link rig9\/uart0/);
  });
});
