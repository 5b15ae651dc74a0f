import { describe, expect, it } from 'vitest';
import { DecodeTurns } from '../src/decode-turns.js';

/** The clock the turns' budget is counted on: a chunk's decoding moves it on by its time. */
class Clock {
  ms = 0;
  readonly now = () => this.ms;
}

/** A link's decoding loop: `chunks` chunks, each taken in turn and decoded for `ms`, then published (an await). */
async function link(
  turns: DecodeTurns,
  clock: Clock,
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
      clock.ms += ms;
      log.push(name);
    } finally {
      turns.done();
    }
    await Promise.resolve();
  }
}

describe('DecodeTurns', () => {
  it('lets the event loop come round while many links decode: an iteration decodes for its budget, not for every link', async () => {
    const clock = new Clock();
    const turns = new DecodeTurns(10, clock.now);
    const log: number[] = [];
    let decodedWhenLoopCameRound = -1;
    // Runs when the event loop next comes round (its check phase): what a timer or a read waits for.
    setImmediate(() => {
      decodedWhenLoopCameRound = log.length;
    });
    // 100 links with work at once, as when one read brings every link's publish acknowledgement.
    await Promise.all(Array.from({ length: 100 }, (_, i) => link(turns, clock, i, 3, 2, log)));
    expect(log).toHaveLength(300);
    // 2 ms a chunk against a 10 ms budget: the loop came round after five chunks, not 300.
    expect(decodedWhenLoopCameRound).toBe(5);
    expect(turns.queued).toBe(0);
  });

  it('gives turns to the oldest chunks first, and in the order asked among chunks of one age', async () => {
    const clock = new Clock();
    const turns = new DecodeTurns(1, clock.now);
    const log: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => link(turns, clock, i, 2, 0.5, log)));
    // Each link's first chunk before any link's second: nobody goes round twice while another waits.
    expect(log.slice(0, 20).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(log.slice(20).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('serves a link with more chunks waiting as often as its chunks are old, not once a round', async () => {
    const clock = new Clock();
    const turns = new DecodeTurns(1, clock.now);
    const log: number[] = [];
    // Link 0 received a chunk every 1 ms, the nine others every 8 ms (a fast link among slow ones).
    await Promise.all([
      link(turns, clock, 0, 40, 0.3, log, (i) => i),
      ...Array.from({ length: 9 }, (_, k) => link(turns, clock, k + 1, 5, 0.3, log, (i) => i * 8)),
    ]);
    // Taken oldest first, the fast link's chunks received by 32 ms (33 of them) are decoded by
    // the time the slow links' last ones (received at 32 ms) are; one a round would be 5 or 6.
    const slowDone = Math.max(...Array.from({ length: 9 }, (_, k) => log.lastIndexOf(k + 1)));
    expect(log).toHaveLength(85);
    expect(log.slice(0, slowDone).filter((n) => n === 0).length).toBeGreaterThanOrEqual(30);
  });

  it('lets a lone link go on at once, without waiting for the next iteration', () => {
    const turns = new DecodeTurns(10, new Clock().now);
    for (let i = 0; i < 5; i++) {
      expect(turns.take(i)).toBeUndefined();
      turns.done();
    }
  });
});
