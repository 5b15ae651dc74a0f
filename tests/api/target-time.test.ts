// Issue 36: target time. A capture with 2-byte timestamps that wrap (fmt_v32s: QS_TIME_SIZE 2),
// sent twice in one session as a target that resets and runs again (its second copy begins
// with the reset target info), decoded as the pipeline decodes and stored as storage stores.
// What is expected comes from the reference qspy's text of the capture: the stamps it prints,
// unwrapped by the spec's rule (a 16-bit counter; a stamp lower than the last one wrapped).
import { readFileSync } from 'node:fs';
import type { SessionTargetTime, TargetRecordsPage } from '@tracehub/api-contract';
import type { TraceRecord } from '@tracehub/contracts';
import { upsertLink } from '@tracehub/db';
import { T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath, qspyLines } from '../support/paths.js';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
const auth = { authorization: `Bearer ${READ_TOKEN}` };
const get = (url: string) => api.app.inject({ url, headers: auth });

/** The stamps qspy printed for fmt_v32s, in order: every line that begins with ten digits. */
const printedStamps = qspyLines('fmt_v32s')
  .map((line) => /^(\d{10}) /.exec(line))
  .filter((m) => m !== null)
  .map((m) => BigInt(m[1]));

/** The printed stamps unwrapped: a 16-bit counter, so each step is the difference modulo 2^16. */
const unwrapped = printedStamps.map((_, i) => {
  let t = printedStamps[0];
  for (let j = 1; j <= i; j++) t += (printedStamps[j] - printedStamps[j - 1] + 0x10000n) % 0x10000n;
  return t;
});

/** Every record of a target segment, through the pages of `GET /target-records`. */
async function segmentRecords(session: string, segment: number): Promise<TargetRecordsPage['records']> {
  const out: TargetRecordsPage['records'] = [];
  let after = -1;
  for (;;) {
    const res = await get(`/api/v1/sessions/${session}/target-records?segment=${segment}&limit=97&afterSeq=${after}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as TargetRecordsPage;
    out.push(...page.records);
    if (page.next === null) return out;
    after = page.next;
  }
}

const stamped = (records: TargetRecordsPage['records']) => records.filter((r) => r.record.targetTs !== null);

beforeAll(async () => {
  api = await testApi('targettime');
  const capture = readFileSync(fixturePath('qs', 'fmt_v32s.qs'));
  const twice = new Uint8Array(Buffer.concat([capture, capture]));
  await storeQsFixture(api.db, 'fmt_v32s', {
    rig: 'rig1',
    link: 'uart0',
    session: 's-reset',
    startNs: T0,
    bytes: twice,
  });
  await storeQsFixture(api.db, 'fmt_v32s', { rig: 'rig1', link: 'uart1', session: 's-rated', startNs: T0 });
  // The fmt app's POSIX port stamps in units of 100 ns.
  await upsertLink(api.db, { rig: 'rig1', name: 'uart1', protocol: 'qs', settings: { tickRate: 10_000_000 } });
});

afterAll(() => api?.close());

describe('target time of QS records', () => {
  it('the reference wraps its 2-byte stamps, so the check below means something', () => {
    const wraps = printedStamps.filter((t, i) => i > 0 && t < printedStamps[i - 1]).length;
    expect(wraps).toBeGreaterThanOrEqual(3);
    expect(unwrapped[unwrapped.length - 1]).toBeGreaterThan(0xffffn);
  });

  it("unwraps every stamp across the counter's wraps, and starts a segment at the target reset", async () => {
    const res = await get('/api/v1/sessions/s-reset/target-time');
    expect(res.statusCode, res.body).toBe(200);
    const view = res.json() as SessionTargetTime;
    expect(view.unit).toBe('ticks');
    expect(view.tickRate).toBeNull();
    expect(view.segments.map((s) => [s.segment, s.firstTicks, s.lastTicks])).toEqual([
      [0, String(unwrapped[0]), String(unwrapped[unwrapped.length - 1])],
      [1, String(unwrapped[0]), String(unwrapped[unwrapped.length - 1])],
    ]);

    for (const segment of [0, 1]) {
      const records = await segmentRecords('s-reset', segment);
      // The raw stamps are the ones qspy printed, in its order; the target time is them unwrapped.
      expect(stamped(records).map((r) => BigInt(r.record.targetTs as string))).toEqual(printedStamps);
      expect(stamped(records).map((r) => BigInt(r.targetTicks))).toEqual(unwrapped);
      for (const r of records) {
        expect(r.record.targetSegment ?? 0).toBe(segment);
        // Written only where it differs from the stamp; read as the stamp otherwise.
        expect(r.record.targetTime ?? r.record.targetTs).toBe(r.targetTicks);
        expect(r.targetSeconds).toBeNull();
      }
      // A record without a stamp of its own is at the time of the stamped record before it.
      for (let i = 1; i < records.length; i++) {
        if (records[i].record.targetTs === null) expect(records[i].targetTicks).toBe(records[i - 1].targetTicks);
      }
    }
  });

  it('gives the records their target time in records pages too', async () => {
    const res = await get('/api/v1/records?session=s-reset&order=asc&limit=1000');
    expect(res.statusCode, res.body).toBe(200);
    const records = (res.json() as { records: TraceRecord[] }).records.filter((r) => r.targetTs !== null);
    expect(records.length).toBeGreaterThan(printedStamps.length);
    const firstCopy = records
      .filter((r) => (r.targetSegment ?? 0) === 0)
      .map((r) => BigInt((r.targetTime ?? r.targetTs) as string));
    expect(firstCopy).toEqual(unwrapped);
  });

  it("reads ticks as seconds by the link's tick rate, and windows by seconds", async () => {
    const res = await get('/api/v1/sessions/s-rated/target-time');
    expect(res.statusCode, res.body).toBe(200);
    const view = res.json() as SessionTargetTime;
    expect(view.unit).toBe('s');
    expect(view.tickRate).toBe(10_000_000);
    expect(view.segments).toHaveLength(1);
    expect(view.segments[0].firstSeconds).toBeCloseTo(Number(unwrapped[0]) / 1e7, 9);
    expect(view.segments[0].lastSeconds).toBeCloseTo(Number(unwrapped[unwrapped.length - 1]) / 1e7, 9);

    // A window from the 50th printed stamp up to (not including) the 200th, in seconds.
    const from = unwrapped[50];
    const to = unwrapped[200];
    const page = await get(
      `/api/v1/sessions/s-rated/target-records?unit=s&from=${Number(from) / 1e7}&to=${Number(to) / 1e7}&limit=5000`,
    );
    expect(page.statusCode, page.body).toBe(200);
    const window = page.json() as TargetRecordsPage;
    const ticks = stamped(window.records).map((r) => BigInt(r.targetTicks));
    expect(ticks).toEqual(unwrapped.filter((t) => t >= from && t < to));
    for (const r of window.records) expect(r.targetSeconds).toBeCloseTo(Number(r.targetTicks) / 1e7, 9);

    // The same window in ticks.
    const inTicks = await get(`/api/v1/sessions/s-rated/target-records?from=${from}&to=${to}&limit=5000`);
    expect(stamped((inTicks.json() as TargetRecordsPage).records).map((r) => BigInt(r.targetTicks))).toEqual(ticks);
  });

  it('refuses seconds without a tick rate, fractions of ticks and unknown sessions', async () => {
    const noRate = await get('/api/v1/sessions/s-reset/target-records?unit=s&from=1');
    expect(noRate.statusCode).toBe(400);
    expect(noRate.json().detail).toMatch(/tickRate/);
    expect((await get('/api/v1/sessions/s-reset/target-records?from=1.5')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/s-reset/target-records?from=abc')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/nope/target-time')).statusCode).toBe(404);
    const beyond = await get('/api/v1/sessions/s-reset/target-records?segment=2');
    expect((beyond.json() as TargetRecordsPage).records).toEqual([]);
  });
});
