// Two runs compared (`GET /compare`): dpp_qv decoded and stored twice, the second run with
// one transition entering another state, on another rig, later, with other host times. The
// counts agree name by name (the same records were sent), and the one transition that
// differs is where the aligned sequences first diverge, linked in both sessions. Read from the
// blocks' digests, and the same from blocks without one (written before blocks kept it).
import type { TraceRecord } from '@tracehub/contracts';
import { T0 } from '@tracehub/tests/support';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeQsFixture } from '../support/qs-fixture-session.js';
import { storeSecondRun } from '../support/second-run.js';
import { type TestApi, testApi } from '../support/test-api.js';
import { READ_TOKEN } from './fixture-data.js';

let api: TestApi;
let first: TraceRecord[];
/** The transition that the second run takes differently. */
let changed: TraceRecord;

const get = (url: string) =>
  api.app.inject({ url: `/api/v1${url}`, headers: { authorization: `Bearer ${READ_TOKEN}` } });

beforeAll(async () => {
  api = await testApi('compare');
  first = (await storeQsFixture(api.db, 'dpp_qv', { rig: 'rigA', link: 'uart0', session: 'run-a', startNs: T0 }))
    .records;
  changed = await storeSecondRun(api.db, first, { rig: 'rigB', session: 'run-b', laterNs: 3_600_000_000_123n });
});

afterAll(() => api?.close());

describe('two runs compared', () => {
  it('show the one transition that differs as the first divergence, with counts side by side', async () => {
    const res = await get('/compare?a=run-a&b=run-b');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.recordsA).toBe(first.length);
    expect(body.recordsB).toBe(first.length);
    // The same records by name and source: every difference is 0, and the transitions are counted.
    expect(body.counts.every((c: { difference: number }) => c.difference === 0)).toBe(true);
    const tran = body.counts.find(
      (c: { name: string; source: string }) => c.name === 'QS_QEP_TRAN' && c.source === changed.qs?.obj,
    );
    expect(tran.a).toBe(first.filter((r) => r.name === 'QS_QEP_TRAN' && r.qs?.obj === changed.qs?.obj).length);
    // Aligned over the trace records (not dictionaries or target info), up to the changed transition.
    const before = first.filter((r) => r.kind === 'record' && r.seq < changed.seq).length;
    expect(body.divergence).toMatchObject({
      index: before,
      a: { seq: changed.seq, name: 'QS_QEP_TRAN', source: changed.qs?.obj },
      b: { seq: changed.seq, name: 'QS_QEP_TRAN', source: changed.qs?.obj },
      linkA: `/#/session/run-a?seq=${changed.seq}&after=${changed.seq - 1}`,
      linkB: `/#/session/run-b?seq=${changed.seq}&after=${changed.seq - 1}`,
    });
  });

  it('find no divergence between a run and itself', async () => {
    const body = (await get('/compare?a=run-a&b=run-a')).json();
    expect(body.divergence).toBeNull();
  });

  it('answer 404 for a session there is none of, and 400 without both', async () => {
    expect((await get('/compare?a=run-a&b=no-such-run')).statusCode).toBe(404);
    const missing = await get('/compare?a=run-a');
    expect(missing.statusCode).toBe(400);
    expect(missing.headers['content-type']).toContain('application/problem+json');
  });

  it('read the same from blocks written before blocks kept a digest, decoding their records instead', async () => {
    const fromDigests = await get('/compare?a=run-a&b=run-b');
    expect(fromDigests.headers['x-tracehub-scanned-bytes']).toBe('0');
    // run-b's blocks (for the rest of this file) as an older storage wrote them: no digest.
    await sql`update record_blocks set digest = null where session = 'run-b'`.execute(api.db);
    const fromRecords = await get('/compare?a=run-a&b=run-b');
    expect(fromRecords.statusCode, fromRecords.body).toBe(200);
    expect(Number(fromRecords.headers['x-tracehub-scanned-bytes'])).toBeGreaterThan(0);
    expect(fromRecords.json()).toEqual(fromDigests.json());
  });
});
