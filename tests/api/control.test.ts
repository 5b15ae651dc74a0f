import net from 'node:net';
import { Gateway, TcpListenSource } from '@tracehub/link';
import { ScriptedTarget } from '@tracehub/qspy-frontend';
import { T0, waitUntil } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishLive } from '../support/publish-live.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { qsFrame } from '../support/qs-rx-frame.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { CONTROL_TOKEN } from './fixture-data.js';

let api: TestApi;
const opened: Array<{ gateway: Gateway; target: net.Socket }> = [];

beforeAll(async () => {
  api = await testApi('ctl', { topology: true, settings: { controlTimeoutMs: 2000 } });
});

afterAll(async () => {
  for (const { gateway, target } of opened) {
    target.destroy();
    await gateway.stop(1000);
  }
  await api?.close();
});

/**
 * A link of the test's own, `rig9/<link>`, whose last session came from a target with 8-byte
 * pointers and 2-byte signals; its gateway (tcp-listen), and a target connected to it that
 * answers as a QP/C QUTest target does (it has not sent its target info yet). Each test has
 * its own: the QS-RX sequence numbers start at 1 for every one.
 */
async function controlledLink(link: string) {
  const stored = await storeQsFixture(api.db, 'dpp_qv', { rig: 'rig9', link, session: `s-ctl-${link}`, startNs: T0 });
  const source = new TcpListenSource('127.0.0.1', 0);
  const gateway = new Gateway({ bus: api.bus, link: { protocol: 'qs', rig: 'rig9', link }, source, flushMs: 5 });
  await gateway.start();
  const target = net.connect(source.boundPort, '127.0.0.1');
  await new Promise((resolve) => target.once('connect', resolve));
  opened.push({ gateway, target });
  const arrived: Buffer[] = [];
  target.on('data', (d) => arrived.push(d));
  const scripted = new ScriptedTarget((bytes) => target.write(bytes), { objPtrSize: 8, funPtrSize: 8 });
  target.on('data', (d) => scripted.receive(d));
  return {
    stored,
    gateway,
    target,
    command: (body: object) =>
      api.app.inject({
        method: 'POST',
        url: `/api/v1/links/${stored.linkId}/commands`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
        payload: body,
      }),
    /** Waits until at least `n` bytes reached the target (or 2 s passed); takes what came. */
    async arrivedBytes(n: number): Promise<Buffer> {
      for (let i = 0; i < 200 && Buffer.concat(arrived).length < n; i++) await new Promise((r) => setTimeout(r, 10));
      return Buffer.concat(arrived.splice(0));
    },
  };
}

describe('control', () => {
  it('writes the exact QS-RX frames to the target through the gateway and returns its reply', async () => {
    const { gateway, command, arrivedBytes } = await controlledLink('uart0');
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
    const { stored, target, command, arrivedBytes } = await controlledLink('uart1');
    // Stand in for the decoder: when the target receives the reset, the link's next records appear on rec.qs.rig9.uart0.
    const answer = stored.records.find((r) => r.name === 'QS_TARGET_INFO')!;
    target.once('data', () => {
      publishLive(api.bus, [{ ...answer, session: 'after-reset', seq: 0 }], 0);
    });
    const res = await command({ command: { command: 'reset' }, replyWindowMs: 300 });
    expect(res.statusCode, res.body).toBe(200);
    // The link's first command: sequence number 1.
    expect(await arrivedBytes(4)).toEqual(qsFrame(1, 2, []));
    expect(res.json().records).toEqual([{ ...answer, session: 'after-reset', seq: 0 }]);
    // The gateway's own answer: the target info the scripted target sent when it reset.
    expect(res.json()).toMatchObject({ ok: true, outcome: 'data', answer: { fields: { reset: true } } });
  });

  it('says so when the target is not connected or no gateway answers', async () => {
    const { gateway, target, command } = await controlledLink('uart2');
    target.destroy();
    await waitUntil(
      async () => gateway.publisher.currentSession === undefined,
      10_000,
      'the gateway to see the target leave',
    );
    const res = await command({ command: { command: 'tick' } });
    expect(res.statusCode).toBe(502);
    expect(res.json().detail).toMatch(/could not write to the target: the target is not connected/);
    await gateway.stop(1000);
    const none = await command({ command: { command: 'tick' } });
    expect(none.statusCode).toBe(503);
    expect(none.json().detail).toMatch(/no gateway serves link rig9\/uart2/);
  });
});
