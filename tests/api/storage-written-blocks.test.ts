import type { TraceRecord } from '@tracehub/contracts';
import { BlockCodec } from '@tracehub/db';
import { qspyLines, qspySequence, T0 } from '@tracehub/tests/support';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeQsFixture, storeQsFixture } from '../support/qs-fixture-session.js';
import { storeThroughStorage } from '../support/storage-written-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

// The api's reads of record blocks as storage writes them: the records of a capture published
// on the bus as the decoder service publishes them and stored by storage's RecordStore (zstd
// frames kept as they came), read through every route that reads records, against the
// reference qspy output of the capture and against the same capture stored through the JSON
// seeding path the other api tests use.

let api: TestApi;
/** The dpp_qv capture's records as the decoder made them, stored by storage (link bus0). */
let viaStorage: TraceRecord[];
/** The same capture stored through the seeding path (link json0). */
let viaSeeding: TraceRecord[];

beforeAll(async () => {
  api = await testApi('stblocks', { topology: true });
  const place = { rig: 'rig9', startNs: T0 };
  viaSeeding = (await storeQsFixture(api.db, 'dpp_qv', { ...place, link: 'json0', session: 's-json' })).records;
  const decoded = decodeQsFixture('dpp_qv', { ...place, link: 'bus0', session: 's-bus' });
  await storeThroughStorage(api, decoded);
  viaStorage = decoded.records;
});

afterAll(() => api?.close());

async function read(url: string) {
  const res = await api.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${READ_TOKEN}` } });
  expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
  return res;
}

/** Every record of a `/records` query, oldest first, page after page. */
async function recordsOf(query: string): Promise<TraceRecord[]> {
  const records: TraceRecord[] = [];
  let next: string | null = null;
  do {
    const page: { records: TraceRecord[]; next: string | null } = (
      await read(`/api/v1/records?${query}&order=asc&limit=113${next ? `&cursor=${next}` : ''}`)
    ).json();
    records.push(...page.records);
    next = page.next;
  } while (next);
  return records;
}

/** The seeded session's records as the storage-written session's (their link and session told apart). */
const asSeeded = (records: TraceRecord[]) => records.map((r) => ({ ...r, link: 'json0', session: 's-json' }));

describe('blocks written by storage', () => {
  it('are the zstd frames the records came in, where the seeding path writes JSON blocks', async () => {
    const { rows } = await sql<{ session: string; codec: number; blocks: number }>`
      select session, codec, count(*)::int as blocks from record_blocks group by session, codec order by session`.execute(
      api.db,
    );
    const codecsOf = (session: string) => rows.filter((r) => r.session === session).map((r) => r.codec);
    expect(codecsOf('s-bus')).toEqual([BlockCodec.ZstdPieces]);
    expect(codecsOf('s-json').length).toBeGreaterThan(0);
    expect(codecsOf('s-json')).not.toContain(BlockCodec.ZstdPieces);
    expect(viaStorage.length).toBeGreaterThan(400);
  });

  it('read back as the records the decoder published, in pages both ways, and the session counts them', async () => {
    expect(await recordsOf('session=s-bus')).toEqual(viaStorage);
    // The two sessions hold the same decode, but for their link and session.
    expect(viaSeeding).toEqual(asSeeded(viaStorage));
    const newestFirst = (await read('/api/v1/records?session=s-bus&order=desc&limit=50')).json().records;
    expect(newestFirst).toEqual(viaStorage.slice(-50).reverse());
    const bus = (await read('/api/v1/sessions/s-bus')).json();
    const json = (await read('/api/v1/sessions/s-json')).json();
    expect(bus).toMatchObject({ records: viaStorage.length, complete: true });
    expect({ ...bus, id: 's-json', link: 'json0' }).toEqual({ ...json, linkId: bus.linkId });
  });

  const filters: Array<[string, (r: TraceRecord) => boolean]> = [
    ['name=QS_QEP_TRAN,QS_QF_PUBLISH', (r) => r.name === 'QS_QEP_TRAN' || r.name === 'QS_QF_PUBLISH'],
    ['kind=dict', (r) => r.kind === 'dict'],
    ['obj=Table_inst', (r) => r.qs?.obj === 'Table_inst'],
    ['sig=EAT_SIG', (r) => r.qs?.sig === 'EAT_SIG'],
    ['text=philo_inst%5B2%5D', (r) => r.text.toLowerCase().includes('philo_inst[2]')],
    [
      `from=${new Date(Number(T0 / 1_000_000n) + 10).toISOString()}&to=${new Date(Number(T0 / 1_000_000n) + 20).toISOString()}`,
      (r) => BigInt(r.hostNs) >= T0 + 10_000_000n && BigInt(r.hostNs) < T0 + 20_000_000n,
    ],
  ];
  for (const [query, matches] of filters) {
    it(`filter ${query} as the seeded blocks do`, async () => {
      const expected = viaStorage.filter(matches);
      expect(expected.length, query).toBeGreaterThan(0);
      const got = await recordsOf(`${query}&link=bus0`);
      expect(got).toEqual(expected);
      expect(await recordsOf(`${query}&link=json0`)).toEqual(asSeeded(got));
    });
  }

  it('export as exactly what qspy printed, and as the NDJSON of the records', async () => {
    expect((await read('/api/v1/sessions/s-bus/export?format=qspy')).body).toBe(`${qspyLines('dpp_qv').join('\n')}\n`);
    const ndjson = (await read('/api/v1/sessions/s-bus/export?format=ndjson')).body;
    expect(
      ndjson
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(viaStorage);
    const philoStats = (await read('/api/v1/records/export?session=s-bus&name=PHILO_STAT&format=qspy')).body;
    const seeded = (await read('/api/v1/records/export?session=s-json&name=PHILO_STAT&format=qspy')).body;
    expect(philoStats.split('\n').length).toBeGreaterThan(10);
    expect(philoStats).toBe(seeded);
  });

  it('draw the sequence diagram qspy shows, as the seeded session does', async () => {
    const bus = (await read('/api/v1/sessions/s-bus/sequence')).json();
    const reference = qspySequence('dpp_qv');
    const publishes = bus.steps.filter((s: { kind: string }) => s.kind === 'publish');
    expect(publishes.map((s: { sig: string; deliveries: unknown[] }) => [s.sig, s.deliveries.length])).toEqual(
      reference.publishes.map((p) => [p.sig, p.deliveries]),
    );
    expect(reference.publishes.length).toBeGreaterThan(0);
    expect(bus).toEqual({ ...(await read('/api/v1/sessions/s-json/sequence')).json(), session: 's-bus' });
  });

  it('count the state machines and give the dictionaries as the seeded session does', async () => {
    const machines = (await read('/api/v1/sessions/s-bus/state-machines')).json();
    expect(machines.machines.map((m: { obj: string }) => m.obj)).toContain('Table_inst');
    expect(machines).toEqual({ ...(await read('/api/v1/sessions/s-json/state-machines')).json(), session: 's-bus' });
    const dictionaries = (await read('/api/v1/sessions/s-bus/dictionaries')).json();
    const objects = new Set(viaStorage.filter((r) => r.name === 'QS_OBJ_DICT').map((r) => r.fields.obj));
    expect(dictionaries.entries.filter((e: { kind: string }) => e.kind === 'QS_OBJ_DICT')).toHaveLength(objects.size);
    expect(objects.size).toBeGreaterThan(0);
    expect(dictionaries).toEqual((await read('/api/v1/sessions/s-json/dictionaries')).json());
    const dic = (await read('/api/v1/sessions/s-bus/dictionaries.dic')).body;
    expect(dic).toContain('Table_inst');
    expect(dic).toBe((await read('/api/v1/sessions/s-json/dictionaries.dic')).body);
  });

  it('keep the digest a comparison reads (made by the decoder), so the two runs compare without decoding a record', async () => {
    const { rows } = await sql<{ session: string; without: number }>`
      select session, count(*) filter (where digest is null)::int as without from record_blocks
      group by session order by session`.execute(api.db);
    expect(rows).toEqual([
      { session: 's-bus', without: 0 },
      { session: 's-json', without: 0 },
    ]);
    const res = await read('/api/v1/compare?a=s-json&b=s-bus');
    expect(res.headers['x-tracehub-scanned-bytes']).toBe('0');
    const body = res.json();
    expect(body).toMatchObject({ recordsA: viaSeeding.length, recordsB: viaStorage.length, divergence: null });
    expect(body.counts.length).toBeGreaterThan(0);
    expect(body.counts.every((c: { difference: number }) => c.difference === 0)).toBe(true);
  });

  it('keep a target index and state-machine tallies that answer as the records do', async () => {
    const blocks = await api.db
      .selectFrom('record_blocks')
      .select(['target_index', 'machines', 'names'])
      .where('session', '=', 's-bus')
      .execute();
    expect(blocks.every((b) => b.target_index !== null)).toBe(true);
    expect(blocks.some((b) => b.machines !== null)).toBe(true);
    // The timeline on target time, counted per lane from the index: as many as the records with a target time.
    const res = await read('/api/v1/sessions/s-bus/target-timeline?detail=0&buckets=50');
    const timeline = res.json() as { records: number; lanes: Array<{ track: string | null; records: number }> };
    expect(Number(res.headers['x-tracehub-scanned-bytes'])).toBe(0);
    const timed = viaStorage.filter((r) => (r.targetTime ?? r.targetTs) != null && (r.targetSegment ?? 0) === 0);
    expect(timeline.records).toBe(timed.length);
    const perObject = (obj: string) =>
      timed.filter((r) => /^QS_QEP_|^QS_QF_ACTIVE_/.test(r.name) && r.qs?.obj === obj).length +
      timed.filter((r) => r.name.startsWith('QS_QF_TIMEEVT_') && String(r.fields.ao) === obj).length;
    const table = timeline.lanes.find((l) => l.track === 'Table_inst');
    expect(table?.records).toBe(perObject('Table_inst'));
    // The state machines from the tallies alone, as from the records of blocks that keep none.
    const machines = await read('/api/v1/sessions/s-bus/state-machines');
    expect(Number(machines.headers['x-tracehub-scanned-bytes'])).toBe(0);
    await api.db.updateTable('record_blocks').set({ machines: null }).where('session', '=', 's-json').execute();
    const fromRecords = await read('/api/v1/sessions/s-json/state-machines');
    expect(Number(fromRecords.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(0);
    expect(machines.json()).toEqual({ ...fromRecords.json(), session: 's-bus' });
  });
});
