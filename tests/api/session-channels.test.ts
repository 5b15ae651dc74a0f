// Issue 15: an STP session's masters and channels with per-channel counts and the stream's
// errors, from real vectors stored as storage stores them; what is expected is counted from
// `tracehub decode`'s output of the same vector, never from what the route answered.
import type { TraceRecord } from '@tracehub/contracts';
import { upsertLink, upsertSession } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedChannels, storeStpFixture } from '../support/stp-fixture-session.js';
import { expectScanLimited, type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
let issue27: TraceRecord[];
let gerr: TraceRecord[];

const auth = { authorization: `Bearer ${READ_TOKEN}` };
const get = (url: string) => api.app.inject({ url, headers: auth });

beforeAll(async () => {
  api = await testApi('channels');
  const { db } = api;
  // A real CoreSight capture: two channels of one master, a message left open at the end, bytes skipped.
  issue27 = await storeStpFixture(db, 'coresight_issue27', { rig: 'rig1', link: 'stm0', session: 's-27', startNs: T0 });
  // GERR closes every open buffer: three masters.
  gerr = await storeStpFixture(db, 'v2_gerr', { rig: 'rig1', link: 'stm1', session: 's-gerr', startNs: T0 });
  await upsertLink(db, { rig: 'rig1', name: 'uart0', protocol: 'qs' });
  await upsertSession(db, { id: 's-qs', rig: 'rig1', link: 'uart0', protocol: 'qs', startedAt: new Date() });
});

afterAll(() => api?.close());

describe('GET /api/v1/sessions/{id}/channels', () => {
  it("counts a real capture's records per master and channel, and its errors by name", async () => {
    const res = await get('/api/v1/sessions/s-27/channels');
    expect(res.statusCode).toBe(200);
    const expected = expectedChannels(issue27);
    // The vector has what the tree is for: channels, errors on one of them, errors of the stream itself.
    expect(expected.masters[0].channels.length).toBeGreaterThan(1);
    expect(expected.masters[0].errors).toBeGreaterThan(0);
    expect(expected.unaddressed).toBeGreaterThan(0);
    expect(res.json()).toEqual({ session: 's-27', ...expected });
    expect(Number(res.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(0);
  });

  it('keeps masters apart', async () => {
    const res = await get('/api/v1/sessions/s-gerr/channels');
    expect(res.statusCode).toBe(200);
    const expected = expectedChannels(gerr);
    expect(expected.masters.length).toBe(3);
    expect(res.json()).toEqual({ session: 's-gerr', ...expected });
  });

  it('answers 404 for an unknown session, 400 for a bad id or a QS session', async () => {
    const unknown = await get('/api/v1/sessions/nope/channels');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().detail).toMatch(/no session nope/);
    for (const id of ['a\u0000b', '\u0000', 'x'.repeat(65)]) {
      const res = await get(`/api/v1/sessions/${encodeURIComponent(id)}/channels`);
      expect(res.statusCode, JSON.stringify(id)).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    }
    const qs = await get('/api/v1/sessions/s-qs/channels');
    expect(qs.statusCode).toBe(400);
    expect(qs.json().detail).toMatch(/STP/);
    expect((await api.app.inject({ url: '/api/v1/sessions/s-27/channels' })).statusCode).toBe(401);
  });

  it('is a 422 past the scan limit', () => expectScanLimited(api, '/api/v1/sessions/s-27/channels'));
});
