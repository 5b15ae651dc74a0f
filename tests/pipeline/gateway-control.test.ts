// QS-RX commands through a real gateway process: the api (in process) asks the gateway over
// NATS, the gateway process writes the frame to the target on its tcp-listen link and answers
// from what the target sent back.
import type net from 'node:net';
import { ScriptedTarget } from '@tracehub/qspy-frontend';
import { freePort, T0, until } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_TOKEN } from '../api/fixture-data.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { qsFrame } from '../support/qs-rx-frame.js';
import { connectTarget } from '../support/tcp-target.js';
import { startService } from './harness.js';
import { type PipelineWithApi, startPipelineWithApi } from './pipeline-with-api.js';

let pipeline: PipelineWithApi;
let target: net.Socket | undefined;

beforeAll(async () => {
  pipeline = await startPipelineWithApi('gwctl', { services: [], api: { controlTimeoutMs: 5000 } });
}, 60_000);

afterAll(async () => {
  target?.destroy();
  await pipeline?.close();
});

describe('QS-RX commands through a gateway process', () => {
  it('writes the exact frames to the target and answers from its reply', async () => {
    // The link's last session: a target with 8-byte pointers and 2-byte signals.
    const stored = await storeQsFixture(pipeline.db, 'dpp_qv', {
      rig: 'rigG',
      link: 'uart0',
      session: 's-gwctl',
      startNs: T0,
    });
    const port = await freePort();
    pipeline.services.push(
      await startService('gateway', pipeline.env, { TRACEHUB_LINKS: `qs/rigG/uart0=tcp-listen:127.0.0.1:${port}` }),
    );
    const socket = await connectTarget(port);
    target = socket;
    const arrived: Buffer[] = [];
    socket.on('data', (d) => arrived.push(d));
    const scripted = new ScriptedTarget((bytes) => socket.write(bytes), { objPtrSize: 8, funPtrSize: 8 });
    socket.on('data', (d) => scripted.receive(d));
    const command = (body: object) =>
      pipeline.app.inject({
        method: 'POST',
        url: `/api/v1/links/${stored.linkId}/commands`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
        payload: body,
      });
    const arrivedBytes = async (n: number) => {
      await until('the frame at the target', () => Buffer.concat(arrived).length >= n);
      return Buffer.concat(arrived.splice(0));
    };

    // The gateway takes the target's connection: a command before would find no target.
    await until('the gateway to see its target', async () => {
      const res = await pipeline.app.inject({
        url: `/api/v1/links/${stored.linkId}/connection`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      });
      return res.statusCode === 200 && res.json().targetConnected === true;
    });

    // An event with the target's 2-byte signals (from the stored session), no parameters.
    const event = await command({ command: { command: 'event', prio: 1, sig: 6 } });
    expect(event.statusCode, event.body).toBe(200);
    expect(await arrivedBytes(9)).toEqual(qsFrame(1, 16, [0x01, 0x06, 0x00, 0x00, 0x00]));

    // Current object with the target's 8-byte pointers.
    const current = await command({ command: { command: 'currentObject', kind: 5, address: '0x40EBA0' } });
    expect(current.statusCode, current.body).toBe(200);
    expect(await arrivedBytes(12)).toEqual(qsFrame(2, 13, [5, 0xa0, 0xeb, 0x40, 0, 0, 0, 0, 0]));

    // The target's information: its answer, decoded by the gateway from what the target sent back.
    const info = await command({ command: { command: 'info' } });
    expect(info.statusCode, info.body).toBe(200);
    expect(await arrivedBytes(4)).toEqual(qsFrame(3, 0, []));
    const answered = info.json();
    expect([answered.ok, answered.outcome, answered.frame]).toEqual([true, 'data', qsFrame(3, 0, []).toString('hex')]);
    expect(answered.answer).toMatchObject({ name: 'QS_TARGET_INFO', fields: { reset: false, objPtrSize: 8 } });
  }, 60_000);
});
