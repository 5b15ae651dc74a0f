/// <reference lib="dom" />
// Issue 36: the STP channel view on STM timestamps. A CoreSight STM capture (coresight_issue27:
// messages closed by timestamped packets) decoded as the decoder service decodes it (target time
// from the STM timestamps) and stored; the STP page's rows of one master and channel show each
// message's STM timestamp as its target time.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type DecodedRecord, type TraceRecord, toTraceRecord } from '@tracehub/contracts';
import { stpDecoderFactory } from '@tracehub/decoders';
import { T0 } from '@tracehub/tests/support';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_TOKEN } from '../api/fixture-data.js';
import { fixturePath } from '../support/paths.js';
import { type DashboardOnBackends, dashboardOnFreshBackends, screenshotsDir } from '../support/served-dashboard.js';
import { storeRecordBatches, storeSessionStart } from '../support/stored-session.js';

let dashboard: DashboardOnBackends;
let page: Page;
const records: TraceRecord[] = [];

beforeAll(async () => {
  const place = { rig: 'rig9', link: 'stm0', session: 's-stm', startNs: T0 };
  const decoder = stpDecoderFactory.create({ protocol: 'stp', rig: place.rig, link: place.link }, {});
  const emit = (r: DecodedRecord) =>
    records.push(toTraceRecord(r, { ...place, protocol: 'stp', seq: records.length, chunk: 0, hostNs: T0 }));
  decoder.push(new Uint8Array(readFileSync(fixturePath('stp', 'coresight_issue27.stp'))), { hostNs: T0 }, emit);
  decoder.end({ hostNs: T0 }, emit);
  dashboard = await dashboardOnFreshBackends('stptarget', {
    folder: 'dashboard-dist-stp-target',
    height: 700,
    seed: async ({ db }) => {
      await storeSessionStart(db, place, 'stp');
      await storeRecordBatches(db, records);
    },
  });
  page = dashboard.page;
  await dashboard.signIn(READ_TOKEN, '/fleet');
});

afterAll(() => dashboard?.close());

describe('the STP channel view on STM timestamps', () => {
  it("shows each message's STM timestamp as its target time", async () => {
    const stamped = records.filter((r) => r.stp !== undefined && r.targetTs !== null);
    expect(stamped.length).toBeGreaterThan(0);
    const { master, channel } = stamped[0].stp!;
    const expected = records.filter((r) => r.stp?.master === master && r.stp.channel === channel);
    await page.goto(`${dashboard.base}/#/stp?rig=rig9&master=${master}&channel=${channel}`);
    await page.locator('#search-status', { hasText: `${expected.length} records` }).waitFor();
    // The rows drawn (the list draws the visible ones), each with its record's STM timestamp as
    // target time, or for a message without one the last stamp before it.
    const rows = await page
      .locator('.vrow')
      .evaluateAll((els) =>
        els.map((e) => ({ seq: Number((e as HTMLElement).dataset.seq), text: e.textContent ?? '' })),
      );
    expect(rows.length).toBeGreaterThan(10);
    const bySeq = new Map(expected.map((r) => [r.seq, r]));
    /** The stamp of the last stamped record of the session at or before `seq`: a message without one is at that time. */
    const stampAt = (seq: number) => {
      for (let i = seq; i >= 0; i--) if (records[i].targetTs !== null) return records[i].targetTs;
      return null;
    };
    let withTarget = 0;
    for (const row of rows) {
      const r = bySeq.get(row.seq)!;
      expect(r, `row #${row.seq}`).toBeDefined();
      const stamp = stampAt(r.seq);
      if (stamp !== null) {
        expect(row.text).toContain(`t=${BigInt(stamp)}  `);
        if (r.targetTs !== null) withTarget++;
      } else expect(row.text).not.toMatch(/ t=\d/);
    }
    expect(withTarget).toBeGreaterThan(0);
    await page.screenshot({ path: join(screenshotsDir, 'stp-target-time.png') });
  });
});
