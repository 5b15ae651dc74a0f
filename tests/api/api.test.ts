import type { TraceRecord } from '@tracehub/contracts';
import { insertRecords, recordLoss, upsertLink, upsertSession } from '@tracehub/db';
import { QsDecoder } from '@tracehub/qs';
import { qspyLines, qspySequence, T0 } from '@tracehub/tests/support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StoredFixture, storeQsFixture } from '../support/qs-fixture-session.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { CONTROL_TOKEN, READ_TOKEN } from './fixture-data.js';

let api: TestApi;
let dpp: StoredFixture;
let defer: StoredFixture;
let fmt: StoredFixture;
const stp: TraceRecord[] = [];
const all: TraceRecord[] = [];

const auth = { authorization: `Bearer ${READ_TOKEN}` };

beforeAll(async () => {
  api = await testApi('api');
  const { db } = api;
  dpp = await storeQsFixture(db, 'dpp_qv', { rig: 'rig17', link: 'uart0', session: 's-dpp', startNs: T0 });
  defer = await storeQsFixture(db, 'defer', {
    rig: 'rig17',
    link: 'uart1',
    session: 's-defer',
    startNs: T0 + 5_000_000n,
  });
  fmt = await storeQsFixture(db, 'fmt_v64', {
    rig: 'rig3',
    link: 'uart0',
    session: 's-fmt',
    startNs: T0 + 60_000_000_000n,
  });
  // An STP link: a few records addressed by master/channel.
  await upsertLink(db, { rig: 'rig3', name: 'stp0', protocol: 'stp' });
  await upsertSession(db, {
    id: 's-stp',
    rig: 'rig3',
    link: 'stp0',
    protocol: 'stp',
    startedAt: new Date(Number(T0 / 1_000_000n)),
  });
  for (let i = 0; i < 30; i++) {
    stp.push({
      rig: 'rig3',
      link: 'stp0',
      session: 's-stp',
      seq: i,
      chunk: i,
      protocol: 'stp',
      hostNs: (T0 + BigInt(i) * 1_000_000n).toString(),
      targetTs: null,
      kind: 'record',
      type: 4,
      name: 'STP_MESSAGE',
      stp: { master: 10 + (i % 3), channel: i % 5 },
      fields: { n: i },
      // Two of them with a literal "50%": the text filter must match it, and only it.
      text: `M${10 + (i % 3)} C${i % 5} message "${i}", ${i % 10 === 5 ? '50% full' : 'ok'}`,
      raw: Buffer.from([i, 0x7e]).toString('base64'),
    });
  }
  await insertRecords(db, stp);
  all.push(...dpp.records, ...defer.records, ...fmt.records, ...stp);
});

afterAll(() => api?.close());

const key = (r: { session: string; seq: number }) => `${r.session}/${r.seq}`;
/** The (host time, session, seq) order the api promises, oldest first. */
const byTime = (a: TraceRecord, b: TraceRecord) => {
  const ta = BigInt(a.hostNs) / 1000n;
  const tb = BigInt(b.hostNs) / 1000n;
  return ta !== tb ? (ta < tb ? -1 : 1) : a.session !== b.session ? (a.session < b.session ? -1 : 1) : a.seq - b.seq;
};

async function get(url: string, headers: Record<string, string> = auth) {
  return api.app.inject({ method: 'GET', url, headers });
}

/** Every record a filter query returns, following `next` cursors. */
async function fetchAll(query: string, limit = 1000): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  let cursor = '';
  for (let pages = 0; pages < 1000; pages++) {
    const res = await get(`/api/v1/records?${query}&order=asc&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    out.push(...body.records);
    if (!body.next) return out;
    cursor = body.next;
  }
  throw new Error('too many pages');
}

function expectProblem(
  res: { statusCode: number; headers: Record<string, unknown>; json(): { status: number; detail: string } },
  status: number,
  detail: RegExp,
) {
  expect(res.statusCode).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(body.status).toBe(status);
  expect(body.detail).toMatch(detail);
}

describe('auth', () => {
  it('refuses a request without a token, with an unknown token, and without the scope', async () => {
    expectProblem(await get('/api/v1/rigs', {}), 401, /missing bearer token/);
    expectProblem(
      await get('/api/v1/rigs', { authorization: 'Bearer not-a-known-token-at-all' }),
      401,
      /unknown bearer token/,
    );
    expectProblem(await get('/metrics', {}), 401, /missing bearer token/);
    const res = await api.app.inject({
      method: 'POST',
      url: `/api/v1/links/${dpp.linkId}/commands`,
      headers: auth,
      payload: { command: { command: 'info' } },
    });
    expectProblem(res, 403, /lacks the 'control' scope/);
  });

  it('serves health without a token, and the token in the query for browsers', async () => {
    expect((await get('/healthz', {})).json()).toEqual({ status: 'alive' });
    expect((await get('/readyz', {})).json()).toEqual({ status: 'ready' });
    // Browsers cannot send a header on a download link or an EventSource: only there.
    expect((await get(`/api/v1/records/export?format=csv&rig=x&access_token=${READ_TOKEN}`, {})).statusCode).toBe(200);
    expect((await get(`/api/v1/rigs?access_token=${READ_TOKEN}`, {})).statusCode).toBe(401);
    const metrics = await get('/metrics');
    expect(metrics.statusCode).toBe(200);
    expect(metrics.body).toContain('tracehub_api_requests_total');
  });

  it('publishes an OpenAPI document with every route', async () => {
    const doc = (await get('/docs/json', {})).json();
    for (const path of [
      '/api/v1/records',
      '/api/v1/sessions/{id}',
      '/api/v1/links/{id}/commands',
      '/api/v1/live/sse',
      '/api/v1/sessions/{id}/export',
    ]) {
      expect(Object.keys(doc.paths)).toContain(path);
    }
  });
});

describe('fleet and sessions', () => {
  it('lists rigs with their links and stored totals', async () => {
    const { rigs } = (await get('/api/v1/rigs')).json();
    expect(rigs.map((r: { name: string }) => r.name)).toEqual(['rig17', 'rig3']);
    const uart0 = rigs[0].links.find((l: { name: string }) => l.name === 'uart0');
    expect(uart0).toMatchObject({
      id: dpp.linkId,
      protocol: 'qs',
      sessions: 1,
      records: dpp.records.length,
      errors: dpp.records.filter((r) => r.kind === 'error').length,
      latestSession: 's-dpp',
      recordsPerSecond: 0,
    });
    expect((await get(`/api/v1/links/${dpp.linkId}`)).json().name).toBe('uart0');
    // Addressed by name too, as protocol.rig.link: the same link.
    expect((await get('/api/v1/links/qs.rig17.uart0')).json()).toEqual(
      (await get(`/api/v1/links/${dpp.linkId}`)).json(),
    );
    expectProblem(
      await get('/api/v1/links/stp.rig17.uart0'),
      404,
      /no stp link rig17\/uart0: GET \/api\/v1\/links lists/,
    );
    expect((await get('/api/v1/links?rig=rig3')).json().links.map((l: { name: string }) => l.name)).toEqual([
      'stp0',
      'uart0',
    ]);
    expect((await get('/api/v1/rigs/rig3')).json().links).toHaveLength(2);
    expectProblem(await get('/api/v1/rigs/nope'), 404, /no rig named nope/);
    expectProblem(await get('/api/v1/links/999999'), 404, /no link with id 999999/);
  });

  it('shows a session with target info, time span and counts', async () => {
    const s = (await get('/api/v1/sessions/s-dpp')).json();
    expect(s).toMatchObject({
      id: 's-dpp',
      rig: 'rig17',
      link: 'uart0',
      protocol: 'qs',
      records: dpp.records.length,
      complete: true,
    });
    expect(s.targetInfo).toMatchObject({ version: 740, objPtrSize: 8, sigSize: 2 });
    expect(new Date(s.firstRecordAt).getTime()).toBe(Number(T0 / 1_000_000n));
    expectProblem(await get('/api/v1/sessions/missing'), 404, /no session missing/);
    const dict = (await get('/api/v1/sessions/s-dpp/dictionaries')).json();
    const objects = dpp.records.filter((r) => r.name === 'QS_OBJ_DICT');
    const objectEntries = dict.entries.filter((e: { kind: string }) => e.kind === 'QS_OBJ_DICT');
    expect(objectEntries).toHaveLength(new Set(objects.map((r) => r.fields.obj)).size);
    // An object named again takes its latest name.
    const latest = objects.filter((r) => r.fields.obj === objects[0].fields.obj).at(-1)!;
    expect(objectEntries).toContainEqual({
      kind: 'QS_OBJ_DICT',
      key: `obj=${latest.fields.obj}`,
      name: latest.fields.name,
    });
  });

  it('pages through sessions newest first', async () => {
    const first = (await get('/api/v1/sessions?limit=2')).json();
    expect(first.sessions.map((s: { id: string }) => s.id)).toEqual(['s-fmt', 's-defer']);
    const second = (await get(`/api/v1/sessions?limit=2&cursor=${first.next}`)).json();
    expect(second.sessions.map((s: { id: string }) => s.id)).toEqual(['s-stp', 's-dpp']);
    expect(second.next).toBeNull();
    expect((await get('/api/v1/sessions?rig=rig17')).json().sessions).toHaveLength(2);
  });

  it('draws the sequence diagram of a QS session from its records, each event once', async () => {
    const d = (await get('/api/v1/sessions/s-dpp/sequence')).json();
    expect(d.truncated).toBe(false);
    expect(d.nextAfter).toBeNull();
    for (const p of ['Philo_inst[0]', 'Philo_inst[4]', 'Table_inst', 'l_clock_tick'])
      expect(d.participants).toContain(p);
    // The reference qspy's text of the capture says what there is to draw.
    const reference = qspySequence('dpp_qv');
    const of = (kind: string) => d.steps.filter((s: { kind: string }) => s.kind === kind);
    expect(of('publish').map((s: { sig: string; deliveries: unknown[] }) => [s.sig, s.deliveries.length])).toEqual(
      reference.publishes.map((p) => [p.sig, p.deliveries]),
    );
    expect(of('timeout')).toHaveLength(reference.timeEvents);
    expect(of('post')).toHaveLength(reference.directPosts);
    // Every AO-Post record is in the diagram exactly once: an arrow of its own, a delivery of a
    // publish, or the delivery of a time event.
    const drawn = [
      ...of('post').map((s: { seq: number }) => s.seq),
      ...of('publish').flatMap((s: { deliveries: Array<{ seq: number }> }) => s.deliveries.map((x) => x.seq)),
      ...of('timeout').map((s: { deliverySeq: number }) => s.deliverySeq),
    ].sort((a, b) => a - b);
    const posts = dpp.records.filter((r) => r.name === 'QS_QF_ACTIVE_POST');
    expect(drawn).toEqual(posts.map((r) => r.seq));
    const direct = of('post')[0];
    const record = posts.find((r) => r.seq === direct.seq)!;
    expect(direct).toMatchObject({ from: record.fields.sender, to: record.fields.obj, sig: record.fields.sig });
    // Time events come from the ticker that posted them, not from a lane per time event object.
    expect(of('timeout')[0].from).toBe('l_clock_tick');
    const states = of('state');
    expect(states.filter((s: { from: string | null }) => s.from === null)).toHaveLength(reference.initialTransitions);
    expect(states.filter((s: { from: string | null }) => s.from !== null)).toHaveLength(reference.transitions);
    expectProblem(await get('/api/v1/sessions/s-stp/sequence'), 400, /drawn from QS sessions/);
  });

  it('pages through a sequence diagram', async () => {
    const whole = (await get('/api/v1/sessions/s-dpp/sequence')).json();
    const first = (await get('/api/v1/sessions/s-dpp/sequence?limit=20')).json();
    expect(first.truncated).toBe(true);
    expect(first.steps).toEqual(whole.steps.slice(0, 20));
    const second = (await get(`/api/v1/sessions/s-dpp/sequence?limit=20&after=${first.nextAfter}`)).json();
    expect(second.steps).toEqual(whole.steps.slice(20, 40));
  });
});

describe('records', () => {
  const cases: Array<[string, (r: TraceRecord) => boolean]> = [
    ['rig=rig17', (r) => r.rig === 'rig17'],
    ['rig=rig3&link=uart0', (r) => r.rig === 'rig3' && r.link === 'uart0'],
    ['session=s-defer', (r) => r.session === 's-defer'],
    ['protocol=stp', (r) => r.protocol === 'stp'],
    ['name=PHILO_STAT&name=QS_QEP_TRAN', (r) => r.name === 'PHILO_STAT' || r.name === 'QS_QEP_TRAN'],
    ['name=QS_QF_ACTIVE_POST,QS_QF_PUBLISH', (r) => r.name === 'QS_QF_ACTIVE_POST' || r.name === 'QS_QF_PUBLISH'],
    ['type=6', (r) => r.type === 6],
    ['kind=dict', (r) => r.kind === 'dict'],
    ['kind=error,info', (r) => r.kind === 'error' || r.kind === 'info'],
    ['obj=Table_inst', (r) => r.qs?.obj === 'Table_inst'],
    ['sig=EAT_SIG&session=s-dpp', (r) => r.qs?.sig === 'EAT_SIG' && r.session === 's-dpp'],
    ['master=11', (r) => r.stp?.master === 11],
    ['master=12&channel=3', (r) => r.stp?.master === 12 && r.stp?.channel === 3],
    ['text=philo_inst%5B2%5D', (r) => r.text.toLowerCase().includes('philo_inst[2]')],
    ['text=50%25', (r) => r.text.includes('50%')],
    [
      `from=${new Date(Number(T0 / 1_000_000n) + 10).toISOString()}&to=${new Date(Number(T0 / 1_000_000n) + 20).toISOString()}`,
      (r) => BigInt(r.hostNs) >= T0 + 10_000_000n && BigInt(r.hostNs) < T0 + 20_000_000n,
    ],
  ];
  for (const [query, predicate] of cases) {
    it(`filters ${query}`, async () => {
      const expected = all.filter(predicate).sort(byTime);
      // A filter that matches nothing would agree with any server that returns nothing.
      expect(expected.length, query).toBeGreaterThan(0);
      const got = await fetchAll(query, 97);
      expect(got.map(key)).toEqual(expected.map(key));
      if (query.startsWith('session=s-defer')) expect(got).toEqual(expected);
    });
  }

  it('filters by priority: the records of active objects of that priority', async () => {
    const prios = [...new Set(all.map((r) => r.qs?.prio).filter((p) => p !== undefined))];
    expect(prios.length).toBeGreaterThan(0);
    const prio = prios[0];
    const expected = all.filter((r) => r.qs?.prio === prio).sort(byTime);
    expect(expected.length).toBeGreaterThan(0);
    expect((await fetchAll(`prio=${prio}`, 97)).map(key)).toEqual(expected.map(key));
  });

  it('pages newest first and oldest first without gaps or repeats, and back again', async () => {
    const expected = dpp.records.slice().sort(byTime);
    for (const order of ['asc', 'desc'] as const) {
      const want = order === 'asc' ? expected : expected.slice().reverse();
      const pages: TraceRecord[][] = [];
      const cursors: Array<string | null> = [];
      let cursor: string | null = null;
      do {
        const res = await get(
          `/api/v1/records?session=s-dpp&order=${order}&limit=37${cursor ? `&cursor=${cursor}` : ''}`,
        );
        const body = res.json();
        pages.push(body.records);
        cursors.push(body.prev);
        cursor = body.next;
      } while (cursor);
      expect(pages.flat().map(key)).toEqual(want.map(key));
      expect(cursors[0]).toBeNull();
      // `prev` of page 3 gives page 2 exactly.
      const back = (await get(`/api/v1/records?session=s-dpp&order=${order}&limit=37&cursor=${cursors[2]}`)).json();
      expect(back.records.map(key)).toEqual(pages[1].map(key));
      expect(back.next).not.toBeNull();
    }
  });

  it('defaults to newest first, 100 a page', async () => {
    const body = (await get('/api/v1/records')).json();
    expect(body.records).toHaveLength(100);
    expect(body.records.map(key)).toEqual(all.slice().sort(byTime).reverse().slice(0, 100).map(key));
  });
});

describe('exports', () => {
  it('exports a fixture session as exactly what qspy printed', async () => {
    const res = await get('/api/v1/sessions/s-dpp/export?format=qspy');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['content-disposition']).toMatch(/attachment; filename="s-dpp.txt"/);
    expect(res.body).toBe(`${qspyLines('dpp_qv').join('\n')}\n`);
  });

  it('exports the original bytes, which decode again to what qspy printed', async () => {
    const res = await get('/api/v1/sessions/s-defer/export?format=raw');
    expect(res.headers['content-type']).toBe('application/octet-stream');
    const decoder = new QsDecoder();
    const texts: string[] = [];
    decoder.push(new Uint8Array(res.rawPayload), { hostNs: 0n }, (r) => r.text !== '' && texts.push(r.text));
    expect(texts.join('\n').split('\n')).toEqual(qspyLines('defer'));
  });

  it('exports NDJSON and CSV of a session', async () => {
    const nd = await get('/api/v1/sessions/s-fmt/export?format=ndjson');
    const lines = nd.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(fmt.records);
    const csv = await get('/api/v1/sessions/s-stp/export?format=csv');
    const rows = csv.body.trimEnd().split('\r\n');
    expect(rows[0]).toBe(
      'rig,link,session,seq,chunk,protocol,host_ns,target_ts,kind,type,name,qs_obj,qs_sig,qs_prio,stp_master,stp_channel,fields,text,raw_hex',
    );
    expect(rows).toHaveLength(31);
    expect(rows[1]).toBe(
      `rig3,stp0,s-stp,0,0,stp,${T0},,record,4,STP_MESSAGE,,,,10,0,"{""n"":0}","M10 C0 message ""0"", ok",007e`,
    );
  });

  it('exports a filtered range in time order', async () => {
    const res = await get('/api/v1/records/export?session=s-dpp&name=PHILO_STAT&format=qspy');
    const expected = dpp.records
      .filter((r) => r.name === 'PHILO_STAT')
      .map((r) => `${r.text}\n`)
      .join('');
    expect(res.body).toBe(expected);
    const empty = await get('/api/v1/records/export?rig=nowhere&format=ndjson');
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toBe('');
    expectProblem(await get('/api/v1/records/export?format=csv'), 400, /needs a session, a rig or a from time/);
  });
});

describe('bad input', () => {
  const bad: Array<[string, RegExp]> = [
    ['/api/v1/records?limit=0', /limit: must be an integer from 1 to 1000/],
    ['/api/v1/records?limit=100000', /limit: must be an integer from 1 to 1000/],
    ['/api/v1/records?limit=ten', /limit.*integer/],
    ['/api/v1/records?order=sideways', /order/],
    ['/api/v1/records?kind=bogus', /kind/],
    ['/api/v1/records?from=yesterday', /from.*date-time/],
    ['/api/v1/records?from=2025-11-25T00:00:00Z&to=2025-11-24T00:00:00Z', /from is after to/],
    ['/api/v1/records?prio=-1', /prio/],
    ['/api/v1/records?master=70000', /master/],
    ['/api/v1/records?rig=bad.rig', /rig.*pattern/],
    ['/api/v1/records?cursor=%%%', /malformed cursor/],
    ['/api/v1/records?cursor=bm90LWpzb24', /malformed cursor/],
    [
      `/api/v1/records?cursor=${Buffer.from('["r1","asc","after","1","s",-1]').toString('base64url')}`,
      /malformed cursor/,
    ],
    [`/api/v1/records?cursor=${Buffer.from('{"a":1}').toString('base64url')}`, /malformed cursor/],
    [
      `/api/v1/records?order=desc&cursor=${Buffer.from('["r1","asc","after","1","s","2"]').toString('base64url')}`,
      /made for order=asc/,
    ],
    ['/api/v1/sessions?cursor=xyz', /malformed cursor/],
    [`/api/v1/sessions/${'x'.repeat(65)}`, /id/],
    ['/api/v1/links/abc', /id.*integer/],
    ['/api/v1/links/0', /id/],
    ['/api/v1/sessions/s-dpp/export?format=pdf', /format/],
    ['/api/v1/sessions/s-dpp/sequence?limit=1000000', /limit/],
    ['/api/v1/no-such-route', /no route GET \/api\/v1\/no-such-route/],
  ];
  for (const [url, detail] of bad) {
    it(`answers ${url.slice(0, 90)} with a 4xx problem`, async () => {
      const res = await get(url);
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expectProblem(res, res.statusCode, detail);
    });
  }

  it('refuses bad control bodies with 4xx', async () => {
    const post = (payload: string, type = 'application/json') =>
      api.app.inject({
        method: 'POST',
        url: `/api/v1/links/${dpp.linkId}/commands`,
        headers: { authorization: `Bearer ${CONTROL_TOKEN}`, 'content-type': type },
        payload,
      });
    expectProblem(await post('{"command":'), 400, /JSON/i);
    expectProblem(await post('{"command":{"command":"poke","offset":"x","size":4,"items":[1]}}'), 400, /body/);
    expectProblem(await post('{"command":{"command":"selfDestruct"}}'), 400, /body/);
    expectProblem(await post('{"command":{"command":"peek","offset":0,"size":3,"num":1}}'), 400, /body/);
    expectProblem(
      await post(JSON.stringify({ command: { command: 'event', prio: 1, sig: 5, params: new Array(3000).fill(1) } })),
      413,
      /body/i,
    );
    expectProblem(await post('command=info', 'application/x-www-form-urlencoded'), 415, /content-type/i);
    // Well-formed, but no gateway answers on this bus prefix.
    expectProblem(await post('{"command":{"command":"info"}}'), 503, /no gateway serves link rig17\/uart0/);
    const stpLink = (await get('/api/v1/links?rig=rig3')).json().links.find((l: { name: string }) => l.name === 'stp0');
    const res = await api.app.inject({
      method: 'POST',
      url: `/api/v1/links/${stpLink.id}/commands`,
      headers: { authorization: `Bearer ${CONTROL_TOKEN}` },
      payload: { command: { command: 'info' } },
    });
    expectProblem(res, 409, /commands are QS-RX/);
  });
});

describe('record losses', () => {
  it('says which records of a session storage could not store, and why', async () => {
    expect((await get('/api/v1/sessions/s-defer')).json().recordsRefused).toBe(0);
    expect((await get('/api/v1/sessions/s-defer/losses')).json()).toEqual({ losses: [] });
    // A session of its own (the others' counts are checked elsewhere).
    await upsertSession(api.db, { id: 's-lossy', rig: 'rig17', link: 'uart1', protocol: 'qs', startedAt: new Date(0) });
    await recordLoss(api.db, {
      session: 's-lossy',
      chunk: 7,
      firstSeq: 40,
      lastSeq: 59,
      records: 20,
      reason: 'a record has no valid fields',
    });
    expect((await get('/api/v1/sessions/s-lossy')).json().recordsRefused).toBe(20);
    const { losses } = (await get('/api/v1/sessions/s-lossy/losses')).json();
    expect(losses).toEqual([
      {
        chunk: 7,
        firstSeq: 40,
        lastSeq: 59,
        records: 20,
        reason: 'a record has no valid fields',
        lostAt: expect.stringMatching(/^\d{4}-/),
      },
    ]);
    expectProblem(await get('/api/v1/sessions/missing/losses'), 404, /no session missing/);
    expect((await get('/api/v1/sessions/bad%00id/losses')).statusCode).toBe(400);
  });
});
