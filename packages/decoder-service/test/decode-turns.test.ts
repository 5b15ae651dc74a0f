import { describe, expect, it } from 'vitest';
import { DecodeTurns } from '../src/decode-turns.js';

/** Holds the thread for `ms`, as a chunk's decoding does. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/** A link's decoding loop: `chunks` chunks, each taken in turn and decoded for `ms`, then published (an await). */
async function link(
  turns: DecodeTurns,
  name: number,
  chunks: number,
  ms: number,
  log: number[],
  receivedAt = (i: number) => i,
): Promise<void> {
  for (let i = 0; i < chunks; i++) {
    const wait = turns.take(receivedAt(i));
    if (wait) await wait;
    try {
      busy(ms);
      log.push(name);
    } finally {
      turns.done();
    }
    await Promise.resolve();
  }
}

describe('DecodeTurns', () => {
  it('lets timers run while many links decode: a loop iteration decodes for about its budget, not for every link', async () => {
    const turns = new DecodeTurns(10);
    const log: number[] = [];
    let decodedWhenTimerRan = -1;
    setTimeout(() => {
      decodedWhenTimerRan = log.length;
    }, 0);
    // 100 links with work at once, as when one read brings every link's publish acknowledgement.
    await Promise.all(Array.from({ length: 100 }, (_, i) => link(turns, i, 3, 2, log)));
    expect(log).toHaveLength(300);
    // 2 ms a chunk against a 10 ms budget: the timer ran after a handful of chunks, not 300.
    expect(decodedWhenTimerRan).toBeGreaterThanOrEqual(0);
    expect(decodedWhenTimerRan).toBeLessThan(20);
    expect(turns.queued).toBe(0);
  });

  it('gives turns to the oldest chunks first, and in the order asked among chunks of one age', async () => {
    const turns = new DecodeTurns(1);
    const log: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => link(turns, i, 2, 0.5, log)));
    // Each link's first chunk before any link's second: nobody goes round twice while another waits.
    expect(log.slice(0, 20).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(log.slice(20).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('serves a link with more chunks waiting as often as its chunks are old, not once a round', async () => {
    const turns = new DecodeTurns(1);
    const log: number[] = [];
    // Link 0 received a chunk every 1 ms, the nine others every 8 ms (a fast link among slow ones).
    await Promise.all([
      link(turns, 0, 40, 0.3, log, (i) => i),
      ...Array.from({ length: 9 }, (_, k) => link(turns, k + 1, 5, 0.3, log, (i) => i * 8)),
    ]);
    // Taken oldest first, the fast link's chunks received by 32 ms (33 of them) are decoded by
    // the time the slow links' last ones (received at 32 ms) are; one a round would be 5 or 6.
    const slowDone = Math.max(...Array.from({ length: 9 }, (_, k) => log.lastIndexOf(k + 1)));
    expect(log).toHaveLength(85);
    expect(log.slice(0, slowDone).filter((n) => n === 0).length).toBeGreaterThanOrEqual(30);
  });

  it('lets a lone link go on at once, without waiting for the next iteration', () => {
    const turns = new DecodeTurns(10);
    for (let i = 0; i < 5; i++) {
      expect(turns.take(i)).toBeUndefined();
      turns.done();
    }
  });
});
