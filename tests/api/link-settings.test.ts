// A link's settings as the link page reads and writes them, on real Postgres: the names a
// protocol takes, values written as text (as `tracehub link set` writes them), and the settings
// in use for the latest session, the gateway's over the stored ones.
import { getLinkByName, setSessionLinkSettings, upsertLink, upsertSession } from '@tracehub/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApi, testApi } from '../support/test-api.js';
import { CONTROL_TOKEN, READ_TOKEN } from './fixture-data.js';

let api: TestApi;
const ids = { stp: 0, qs: 0 };

beforeAll(async () => {
  api = await testApi('linkset-api');
  const { db } = api;
  ids.stp = await upsertLink(db, { rig: 'rigS', name: 'stm0', protocol: 'stp' });
  ids.qs = await upsertLink(db, { rig: 'rigS', name: 'uart0', protocol: 'qs' });
});

afterAll(() => api?.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function show(id: number) {
  const res = await api.app.inject({
    url: `/api/v1/links/${id}/settings`,
    headers: { authorization: `Bearer ${READ_TOKEN}` },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

function put(id: number, body: object) {
  return api.app.inject({
    method: 'PUT',
    url: `/api/v1/links/${id}/settings`,
    headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
    payload: body,
  });
}

describe("a link's settings", () => {
  it("lists the settings the link's protocol takes, and what each takes", async () => {
    const stp = await show(ids.stp);
    expect(stp.accepts.map((a: { name: string }) => a.name)).toEqual([
      'version',
      'littleEndianMasters',
      'output',
      'resyncPauseMs',
      'maxPauseMs',
      'start',
      'port',
      'processor',
      'tickHz',
      'timeOffsetNs',
      'palmProcessId',
      'palmModule',
      'tickRate',
    ]);
    expect(stp.accepts[0]).toEqual({ name: 'version', takes: '1 or 2', description: 'STP version (default 2)' });
    expect(stp.accepts[1].takes).toBe('list of 0..65535, e.g. 17,0x12');
    expect(stp.accepts[3].takes).toBe('number 0..60000');
    const qs = await show(ids.qs);
    expect(qs.accepts.find((a: { name: string }) => a.name === 'version').takes).toBe('7.4.0 or 740');
    expect(qs.accepts.find((a: { name: string }) => a.name === 'objPtrSize').takes).toBe('1, 2, 4 or 8');
    expect(qs.accepts.find((a: { name: string }) => a.name === 'tickRate').description).toMatch(/ticks per second/);
    expect(stp.inUse).toBeNull();
  });

  it('reads values written as text as the CLI does: lists, hex, a dotted QS version', async () => {
    const masters = await put(ids.stp, {
      settings: { output: 'ost' },
      text: { littleEndianMasters: '17,18', version: '1' },
    });
    expect(masters.statusCode, masters.body).toBe(200);
    expect(masters.json().settings).toEqual({ output: 'ost', littleEndianMasters: [17, 18], version: 1 });
    const one = await put(ids.stp, { settings: {}, text: { littleEndianMasters: '0x11' } });
    expect(one.json().settings).toEqual({ littleEndianMasters: [17] });
    const version = await put(ids.qs, { settings: { objPtrSize: 8 }, text: { version: '7.4.0' } });
    expect(version.statusCode, version.body).toBe(200);
    expect((await getLinkByName(api.db, 'rigS', 'uart0'))?.settings).toEqual({ objPtrSize: 8, version: 740 });
  });

  it('refuses text the setting cannot take, naming it, and stores nothing', async () => {
    const bad = await put(ids.stp, { settings: {}, text: { version: '3' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().detail).toBe('stp link setting version must be 1 or 2: STP version (default 2)');
    const unknown = await put(ids.stp, { settings: {}, text: { objPtrSize: '4' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toMatch(/unknown stp link setting 'objPtrSize': use version, littleEndianMasters/);
    expect((await getLinkByName(api.db, 'rigS', 'stm0'))?.settings).toEqual({ littleEndianMasters: [17] });
  });

  it("shows the latest session's settings: the stored ones when it started, the gateway's over them", async () => {
    await put(ids.stp, { settings: { version: 1, output: 'phonet' } });
    await sleep(20);
    await upsertSession(api.db, { id: 's-stm0', rig: 'rigS', link: 'stm0', protocol: 'stp', startedAt: new Date() });
    // The gateway's address said `?version=2&port=11` for this session.
    await setSessionLinkSettings(api.db, 's-stm0', { version: 2, port: 11 });
    await sleep(20);
    // A change after the session started is for the next one.
    await put(ids.stp, { settings: { version: 1, output: 'ost' } });
    const { settings, inUse } = await show(ids.stp);
    expect(settings).toEqual({ version: 1, output: 'ost' });
    expect(inUse).toMatchObject({
      session: 's-stm0',
      stored: { version: 1, output: 'phonet' },
      fromAddress: { version: 2, port: 11 },
      settings: { version: 2, output: 'phonet', port: 11 },
    });
  });
});
