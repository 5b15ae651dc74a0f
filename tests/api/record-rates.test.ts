// Issue 17: the plots' aggregate. Block summary rows are written here with counts and host-time
// spans chosen by the test; what each bucket should hold is worked out from those spans by
// `expectedRates` (each block's counts shared out by the part of its span in the bucket) and, for
// one link, by hand; never from the route.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BlockSummary, expectedRates, storeBlockSummaries } from '../support/block-summaries.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;

const T0_MS = 1_764_000_000_000; // 2025-11-24T16:00:00Z
const T0 = BigInt(T0_MS) * 1_000_000n;
const S = 1_000_000_000n;
const auth = { authorization: `Bearer ${READ_TOKEN}` };
const get = (url: string) => api.app.inject({ url, headers: auth });
const iso = (ms: number) => new Date(ms).toISOString();

// Ten minutes in ten buckets of a minute.
const BLOCKS: BlockSummary[] = [
  // Inside bucket 0.
  { rig: 'rig1', link: 'uart0', lo: T0 + 10n * S, hi: T0 + 20n * S - 1n, records: 100, errors: 4, gaps: 1 },
  // Half before the range: only the half inside counts, in bucket 0.
  { rig: 'rig1', link: 'uart0', lo: T0 - 30n * S, hi: T0 + 30n * S - 1n, records: 60, errors: 2, gaps: 2 },
  // Buckets 2 and 3, half each.
  { rig: 'rig1', link: 'uart0', lo: T0 + 120n * S, hi: T0 + 240n * S - 1n, records: 600, errors: 2, gaps: 0 },
  // One instant (a block of one record): all in bucket 5.
  { rig: 'rig1', link: 'uart0', lo: T0 + 300n * S, hi: T0 + 300n * S, records: 7, errors: 0, gaps: 0 },
  // 105 s over buckets 6, 7 and 8: 30 s, 60 s, 15 s of it.
  { rig: 'rig1', link: 'uart0', lo: T0 + 390n * S, hi: T0 + 495n * S - 1n, records: 210, errors: 7, gaps: 3 },
  // After the range.
  { rig: 'rig1', link: 'uart0', lo: T0 + 600n * S, hi: T0 + 660n * S, records: 999, errors: 9, gaps: 9 },
  // Another link of the rig, in bucket 1; half of another block past the range's end.
  { rig: 'rig1', link: 'uart1', lo: T0 + 60n * S, hi: T0 + 120n * S - 1n, records: 1000, errors: 10, gaps: 3 },
  { rig: 'rig1', link: 'uart1', lo: T0 + 570n * S, hi: T0 + 630n * S - 1n, records: 40, errors: 0, gaps: 4 },
  // Another rig.
  { rig: 'rig2', link: 'stm0', lo: T0 + 30n * S, hi: T0 + 90n * S - 1n, records: 120, errors: 0, gaps: 0 },
];

beforeAll(async () => {
  api = await testApi('rates');
  const { db } = api;
  await storeBlockSummaries(db, BLOCKS);
});

afterAll(() => api?.close());

describe('GET /api/v1/rates', () => {
  const range = `from=${iso(T0_MS)}&to=${iso(T0_MS + 600_000)}`;

  it('spreads each block over its host-time span, per link and bucket', async () => {
    const res = await get(`/api/v1/rates?${range}&buckets=10`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.bucketMs).toBe(60_000);
    expect(body.times).toEqual(Array.from({ length: 10 }, (_, i) => T0_MS + i * 60_000));
    expect(body.links.map((l: { rig: string; link: string }) => `${l.rig}/${l.link}`)).toEqual([
      'rig1/uart0',
      'rig1/uart1',
      'rig2/stm0',
    ]);
    for (const l of body.links) {
      const expected = expectedRates(BLOCKS, l.rig, l.link, {
        fromNs: T0,
        toNs: T0 + 600n * S,
        widthNs: 60n * S,
        buckets: 10,
      });
      expect(l, `${l.rig}/${l.link}`).toMatchObject(expected);
    }
    // The shares worked out by hand, so the expectation above is not only the same arithmetic twice.
    const uart0 = body.links[0];
    expect(uart0.records).toEqual([130, 0, 300, 300, 0, 7, 60, 120, 30, 0]);
    expect(uart0.errors).toEqual([5, 0, 1, 1, 0, 0, 2, 4, 1, 0]);
    expect(uart0.gaps).toEqual([2, 0, 0, 0, 0, 0, 0.857, 1.714, 0.429, 0]);
    expect(body.links[1].records[9]).toBe(20);
    expect(body.links[2].records.slice(0, 2)).toEqual([60, 60]);
    expect(body.links[2].protocol).toBe('stp');
  });

  it('narrows to a rig or a link, and a range over every block counts each block whole', async () => {
    const rig1 = (await get(`/api/v1/rates?${range}&buckets=10&rig=rig1`)).json();
    expect(rig1.links.map((l: { link: string }) => l.link)).toEqual(['uart0', 'uart1']);
    const one = (await get(`/api/v1/rates?${range}&buckets=10&rig=rig1&link=uart1`)).json();
    expect(one.links.map((l: { link: string }) => l.link)).toEqual(['uart1']);
    const all = (
      await get(`/api/v1/rates?from=${iso(T0_MS - 3_600_000)}&to=${iso(T0_MS + 3_600_000)}&buckets=7`)
    ).json();
    for (const l of all.links) {
      const blocks = BLOCKS.filter((b) => b.rig === l.rig && b.link === l.link);
      const sum = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) * 100) / 100;
      expect(sum(l.records), `${l.rig}/${l.link}`).toBe(blocks.reduce((n, b) => n + b.records, 0));
      expect(sum(l.errors)).toBe(blocks.reduce((n, b) => n + b.errors, 0));
      expect(sum(l.gaps)).toBe(blocks.reduce((n, b) => n + b.gaps, 0));
    }
    // A range nothing was recorded in.
    const empty = (await get(`/api/v1/rates?from=${iso(T0_MS - 86_400_000)}&to=${iso(T0_MS - 3_600_000)}`)).json();
    expect(empty.links).toEqual([]);
    expect(empty.times.length).toBe(120);
  });

  it('answers 400 for bad input, reversed or empty ranges and NUL bytes; 401 without a token', async () => {
    const bad = [
      `${range}&rig=a%00b`,
      `${range}&link=%00`,
      `${range}&buckets=0`,
      `${range}&buckets=1001`,
      `${range}&buckets=x`,
      `from=${iso(T0_MS + 600_000)}&to=${iso(T0_MS)}`,
      `from=${iso(T0_MS)}&to=${iso(T0_MS)}`,
      `from=${iso(T0_MS)}`,
      `to=${iso(T0_MS)}`,
      `from=yesterday&to=${iso(T0_MS)}`,
      `from=${iso(T0_MS)}%00&to=${iso(T0_MS + 1000)}`,
      `from=2025-12-31T23:59:60Z&to=2026-01-02T00:00:00Z`,
    ];
    for (const q of bad) {
      const res = await get(`/api/v1/rates?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
    }
    expect((await get(`/api/v1/rates?from=${iso(T0_MS + 1)}&to=${iso(T0_MS)}`)).json().detail).toMatch(/after from/);
    expect((await api.app.inject({ url: `/api/v1/rates?${range}` })).statusCode).toBe(401);
  });

  it('stays fast over weeks of blocks', async () => {
    // Three weeks of one busy link: a block of 4 000 records every 20 s (90 720 summary rows).
    const weekStart = T0 + 86_400n * S;
    await sql`
      insert into record_blocks (session, first_seq, last_seq, host_time, min_host_ns, max_host_ns, rig, link,
        protocol, record_count, first_chunk, last_chunk, error_count, gap_count, lost_bytes, names, kinds, types,
        objs, sigs, prios, channels, codec, byte_count, data)
      select 'busy', i * 4000, i * 4000 + 3999,
        timestamptz 'epoch' + ((${weekStart.toString()}::bigint + i * ${(20n * S).toString()}::bigint) / 1000) * interval '1 microsecond',
        ${weekStart.toString()}::bigint + i * ${(20n * S).toString()}::bigint,
        ${weekStart.toString()}::bigint + (i + 1) * ${(20n * S).toString()}::bigint - 1,
        'rig3', 'busy', 'qs', 4000, 0, 0, i % 3, 0, 0, '{}', '{}', '{}', '{}', '{}', '{}', '{}', 0, 0, ''::bytea
      from generate_series(0, 90719) as i`.execute(api.db);
    await sql`analyze record_blocks`.execute(api.db);
    const fromMs = Number(weekStart / 1_000_000n);
    const url = `/api/v1/rates?rig=rig3&from=${iso(fromMs)}&to=${iso(fromMs + 21 * 86_400_000)}&buckets=500`;
    await get(url);
    const started = performance.now();
    const res = await get(url);
    const ms = performance.now() - started;
    console.log(`rates over 3 weeks, 90 720 blocks, 500 buckets: ${ms.toFixed(1)} ms`);
    expect(res.statusCode).toBe(200);
    const [busy] = res.json().links;
    expect(Math.round(busy.records.reduce((a: number, b: number) => a + b, 0))).toBe(90_720 * 4000);
    // 4 000 records every 20 s: 200 records/s all along.
    expect(busy.recordsPerSecond[0]).toBeCloseTo(200, 1);
    expect(busy.recordsPerSecond[499]).toBeCloseTo(200, 1);
  });
});
