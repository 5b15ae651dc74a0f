import { describe, expect, it } from 'vitest';
import { type MissedReason, Outlet, type OutletSink } from '../src/outlet.js';

/** A sink that takes `room` entries, then is backed up until `drain()`. */
function sink(room = Number.POSITIVE_INFINITY) {
  const got: Array<{ item?: number; missed?: number; reason?: MissedReason }> = [];
  let left = room;
  let resume: (() => void) | undefined;
  const s: OutletSink<number> = {
    write(item) {
      got.push({ item });
      return --left > 0;
    },
    missed(missed, reason) {
      got.push({ missed, reason });
      return --left > 0;
    },
    whenWritable(r) {
      resume = r;
    },
  };
  return {
    s,
    got,
    drain(more = Number.POSITIVE_INFINITY) {
      left = more;
      resume?.();
    },
  };
}
const turn = () => new Promise((r) => setImmediate(r));
const settle = async () => {
  for (let i = 0; i < 5; i++) await turn();
};

describe('Outlet', () => {
  it('drops the oldest past its bounds and never holds more', () => {
    const outlet = new Outlet<number>({ records: 3, bytes: 1000 });
    const reader = outlet.reader();
    for (let i = 0; i < 10; i++) outlet.push(i, 1, 100);
    expect([reader.queued, reader.missed, outlet.heldRecordCount]).toEqual([3, 7, 3]);
    const bytesBound = new Outlet<number>({ records: 100, bytes: 250 });
    const other = bytesBound.reader();
    for (let i = 0; i < 10; i++) bytesBound.push(i, 1, 100);
    expect([other.queued, other.missed]).toEqual([2, 8]);
  });

  it('gives a reader that keeps up everything, and a reader that stalls its newest entries and the exact count it missed', async () => {
    const outlet = new Outlet<number>({ records: 20 });
    const fast = sink();
    const slow = sink(1);
    outlet.reader(fast.s);
    const slowReader = outlet.reader(slow.s);
    for (let i = 0; i < 100; i++) {
      // Entries of 2 records each.
      outlet.push(i, 2);
      if (i % 3 === 0) await turn();
    }
    await settle();
    expect(fast.got.map((g) => g.item)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(slowReader.missed + slowReader.queued + slowReader.delivered).toBe(200);
    slow.drain();
    await settle();
    const items = slow.got.filter((g) => g.item !== undefined).map((g) => g.item as number);
    const missed = slow.got.reduce((n, g) => n + (g.missed ?? 0), 0);
    expect(items.length * 2 + missed).toBe(200);
    expect(items.slice(-5)).toEqual([95, 96, 97, 98, 99]);
    expect(slow.got.filter((g) => g.missed !== undefined).every((g) => g.reason === 'slow')).toBe(true);
  });

  it('says records dropped while a reader had no transport were missed while it was away', async () => {
    const outlet = new Outlet<number>({ records: 5 });
    const reader = outlet.reader();
    for (let i = 0; i < 8; i++) outlet.push(i, 1);
    const back = sink();
    reader.attach(back.s);
    await settle();
    expect(back.got).toEqual([{ missed: 3, reason: 'away' }, ...[3, 4, 5, 6, 7].map((item) => ({ item }))]);
  });

  it('tells each reader, in its place, of records that never reached the outlet, and counts them against no limit', async () => {
    const outlet = new Outlet<number>({ records: 3 });
    const reading = sink();
    const stalled = sink(1);
    const reader = outlet.reader(reading.s);
    const behind = outlet.reader(stalled.s);
    outlet.push(0, 1);
    outlet.push(1, 1);
    outlet.pushUnreceived(40);
    outlet.push(2, 1);
    await settle();
    expect(reading.got).toEqual([{ item: 0 }, { item: 1 }, { missed: 40, reason: 'unreceived' }, { item: 2 }]);
    expect([reader.delivered, reader.missed, reader.queued]).toEqual([3, 40, 0]);
    // The stalled reader took one entry; past the limit its oldest entries drop, the gap's
    // notice among them: its 40 records are then counted as missed like the others.
    for (let i = 3; i < 10; i++) outlet.push(i, 1);
    stalled.drain();
    await settle();
    expect(behind.delivered + behind.missed + behind.queued).toBe(50);
    expect(stalled.got.at(-1)).toEqual({ item: 9 });
    expect(stalled.got.reduce((n, g) => n + (g.missed ?? 0), 0) + behind.delivered).toBe(50);
  });

  it('lets a producer wait for room instead of dropping', async () => {
    const outlet = new Outlet<number>({ records: 2 });
    const out = sink(1);
    outlet.reader(out.s);
    outlet.push(0, 1);
    outlet.push(1, 1);
    let waited = false;
    const room = outlet.whenRoom().then(() => {
      waited = true;
    });
    await settle();
    out.drain();
    await room;
    expect(waited).toBe(true);
  });
});
