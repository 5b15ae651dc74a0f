import { describe, expect, it } from 'vitest';
import type { TraceRecord } from '../src/index.js';
import { mergeTargetIndexes, targetEntries, targetIndexOf, trackOf } from '../src/target-index.js';

/** Records of a QS session with lanes, errors, untimed records, a counter that goes back and target resets. */
function session(count: number, seed: number, start: bigint): TraceRecord[] {
  let x = seed;
  const random = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  const objects = ['l_table', 'l_philo0', 'l_philo1', 'l_tester'];
  const records: TraceRecord[] = [];
  let segment = 0;
  let time = start;
  for (let seq = 0; seq < count; seq++) {
    const roll = random();
    if (roll < 0.01) segment++;
    if (roll < 0.02) time = BigInt(Math.floor(random() * 1000));
    else time += BigInt(Math.floor(random() * 5000));
    const untimed = random() < 0.05;
    const obj = objects[Math.floor(random() * objects.length)];
    records.push({
      session: 's',
      seq,
      hostNs: String(seq),
      rig: 'r',
      link: 'l',
      protocol: 'qs',
      chunk: 0,
      kind: random() < 0.05 ? 'error' : 'record',
      type: 1,
      name: random() < 0.5 ? 'QS_QEP_DISPATCH' : 'USER_REC',
      qs: { obj, sig: 'SIG', prio: null },
      fields: {},
      text: '',
      raw: '',
      ...(untimed ? {} : { targetTime: time.toString(), targetSegment: segment }),
    } as unknown as TraceRecord);
  }
  return records;
}

/** An index's entries with their lanes named, as views read them. */
function named(index: ReturnType<typeof targetIndexOf>) {
  return [...targetEntries(Buffer.from(index.index, 'base64'))].map((e) => ({ ...e, lane: index.lanes[e.lane] }));
}

describe('target index', () => {
  it("keeps every record's lane, error flag, segment and time, and merges runs into the index of the whole", () => {
    // Times in doubles (13 digits) and past them (19 digits: the bigint path).
    for (const [seed, start] of [
      [1, 2n ** 40n],
      [7, 2n ** 40n],
      [42, 2n ** 62n],
      [1234, 0n],
    ] as const) {
      const records = session(3000, seed, start);
      const expected = records.map((r) => ({
        lane: trackOf(r),
        error: r.kind === 'error',
        segment: r.targetTime === undefined ? -1 : (r.targetSegment ?? 0),
        time: r.targetTime === undefined ? 0n : BigInt(r.targetTime),
      }));
      const whole = targetIndexOf(records);
      expect(named(whole)).toEqual(expected);
      const timed = expected.filter((e) => e.segment >= 0);
      expect(whole.untimed).toBe(records.length - timed.length);
      expect(BigInt(whole.minTime!)).toBe(timed.reduce((m, e) => (e.time < m ? e.time : m), timed[0].time));
      expect(BigInt(whole.maxTime!)).toBe(timed.reduce((m, e) => (e.time > m ? e.time : m), timed[0].time));
      // Cut into runs of uneven length, merged in order as storage merges the messages of a block.
      let merged = targetIndexOf(records.slice(0, 17));
      for (let from = 17; from < records.length; ) {
        const to = Math.min(records.length, from + 1 + ((from * 31 + seed) % 400));
        merged = mergeTargetIndexes(merged, targetIndexOf(records.slice(from, to)));
        from = to;
      }
      expect(named(merged)).toEqual(expected);
      const { index: _a, lanes: _b, ...summary } = merged;
      const { index: _c, lanes: _d, ...wholeSummary } = whole;
      expect(summary).toEqual(wholeSummary);
    }
  });
});
