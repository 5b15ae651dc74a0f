// Issue 36: target time. A capture with 2-byte timestamps that wrap (fmt_v32s: QS_TIME_SIZE 2),
// sent twice in one session as a target that resets and runs again (its second copy begins
// with the reset target info), decoded as the pipeline decodes and stored as storage stores.
// What is expected comes from the reference qspy's text of the capture: the stamps it prints,
// unwrapped by the spec's rule (a 16-bit counter; a stamp lower than the last one wrapped).
import { readFileSync } from 'node:fs';
import type { SessionTargetTime, TargetRecordsPage, TargetTimelineReply } from '@tracehub/api-contract';
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

/** Every record of a session, from the records pages. */
async function allRecords(session: string): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  let cursor = '';
  for (;;) {
    const res = await get(`/api/v1/records?session=${session}&order=asc&limit=1000${cursor}`);
    expect(res.statusCode, res.body).toBe(200);
    const page = res.json() as { records: TraceRecord[]; next: string | null };
    out.push(...page.records);
    if (page.next === null) return out;
    cursor = `&cursor=${encodeURIComponent(page.next)}`;
  }
}

/** The lane the timeline puts a QS record in: its active object for QEP and active-object records, a time event's AO, else the link. */
function laneOf(r: TraceRecord): string | null {
  if (/^QS_QEP_|^QS_QF_ACTIVE_/.test(r.name)) return r.qs?.obj ?? null;
  if (r.name.startsWith('QS_QF_TIMEEVT_')) return r.fields.ao === undefined ? null : String(r.fields.ao);
  return null;
}

/** Per lane, `records` by bucket of the records of `segment` in `[from, to)` cut into `buckets` slices of `width`. */
function expectedLanes(records: TraceRecord[], segment: number, from: bigint, to: bigint, width: bigint) {
  const lanes = new Map<string | null, Map<number, number>>();
  for (const r of records) {
    const ticks = r.targetTime ?? r.targetTs;
    if (ticks === null || ticks === undefined || (r.targetSegment ?? 0) !== segment) continue;
    const t = BigInt(ticks);
    if (t < from || t >= to) continue;
    const lane = laneOf(r);
    let m = lanes.get(lane);
    if (!m) lanes.set(lane, (m = new Map()));
    const bucket = Number((t - from) / width);
    m.set(bucket, (m.get(bucket) ?? 0) + 1);
  }
  return lanes;
}

const lanesOf = (t: TargetTimelineReply) =>
  new Map(t.lanes.map((l) => [l.track, new Map(l.buckets.map((b) => [b.bucket, b.records]))]));

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

describe('the timeline in target time', () => {
  const timeline = async (query: string) => {
    const res = await get(`/api/v1/sessions/s-reset/target-timeline?${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as TargetTimelineReply;
  };

  it('counts the records of each segment per lane and slice exactly, as the records say', async () => {
    const records = await allRecords('s-reset');
    for (const segment of [0, 1]) {
      const t = await timeline(`segment=${segment}&buckets=7&detail=0`);
      // The whole segment: its first unwrapped stamp to just after its last.
      expect(t.fromTicks).toBe(String(unwrapped[0]));
      expect(t.toTicks).toBe(String(unwrapped[unwrapped.length - 1] + 1n));
      expect(t.items).toBeNull();
      const width = BigInt(t.bucketTicks);
      expect(width * 7n).toBeGreaterThanOrEqual(BigInt(t.toTicks!) - BigInt(t.fromTicks!));
      const expected = expectedLanes(records, segment, BigInt(t.fromTicks!), BigInt(t.toTicks!), width);
      expect(lanesOf(t)).toEqual(expected);
      expect(t.records).toBe(
        [...expected.values()].reduce((n, m) => n + [...m.values()].reduce((a, b) => a + b, 0), 0),
      );
      // More than one lane: the active objects of the capture, beside the link's own records.
      expect(t.lanes.length).toBeGreaterThan(1);
    }
  });

  it('zooms to a window with its records and their text, reading only the blocks in range', async () => {
    const records = await allRecords('s-reset');
    const [from, to] = [unwrapped[50], unwrapped[200]];
    const t = await timeline(`segment=1&from=${from}&to=${to}&buckets=10`);
    const inWindow = records.filter((r) => {
      const ticks = r.targetTime ?? r.targetTs;
      return (r.targetSegment ?? 0) === 1 && ticks != null && BigInt(ticks) >= from && BigInt(ticks) < to;
    });
    expect(inWindow.length).toBeGreaterThan(100);
    expect(t.records).toBe(inWindow.length);
    expect(t.items?.map((i) => [i.seq, i.targetTicks, i.text])).toEqual(
      inWindow.map((r) => [r.seq, r.targetTime ?? r.targetTs, r.text]),
    );
    expect(lanesOf(t)).toEqual(expectedLanes(records, 1, from, to, BigInt(t.bucketTicks)));
  });

  it('counts blocks stored before blocks had a target index from their records, the same', async () => {
    const before = await timeline('segment=0&buckets=13&detail=0');
    const indexed = await api.db
      .selectFrom('record_blocks')
      .select('id')
      .where('session', '=', 's-reset')
      .where('target_index', 'is not', null)
      .execute();
    expect(indexed.length).toBeGreaterThan(0);
    // As a block written before migration 0012 reads: no target columns at all.
    await api.db
      .updateTable('record_blocks')
      .set({ target_index: null, target_lanes: null, target_first_segment: null, target_last_segment: null })
      .where('session', '=', 's-reset')
      .where('id', '=', indexed[0].id)
      .execute();
    const res = await get('/api/v1/sessions/s-reset/target-timeline?segment=0&buckets=13&detail=0');
    expect(res.statusCode, res.body).toBe(200);
    expect(Number(res.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(0);
    expect(res.json()).toEqual(before);
  });

  it('refuses a window that ends before it starts, and bad counts', async () => {
    expect((await get('/api/v1/sessions/s-reset/target-timeline?from=10&to=5')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/s-reset/target-timeline?buckets=0')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/s-reset/target-timeline?detail=9999')).statusCode).toBe(400);
    expect((await get('/api/v1/sessions/nope/target-timeline')).statusCode).toBe(404);
  });
});
