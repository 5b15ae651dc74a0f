// What a sequence diagram of a QS capture must draw, counted from qspy's own output for it.
import { qspyLines } from './paths.js';

export interface QspySequence {
  /** QF-Pub lines, each with the AO-Post lines that delivered it (they follow it directly). */
  publishes: Array<{ sig: string; deliveries: number }>;
  /** TE-Post lines (each delivered by the AO-Post right after it). */
  timeEvents: number;
  /** Init===> lines: one per initial transition of a state machine. */
  initialTransitions: number;
  /** ===>Tran lines. */
  transitions: number;
  /** AO-Post lines in all, and those that deliver neither a publish nor a time event. */
  posts: number;
  directPosts: number;
}

const field = (line: string, name: string) => new RegExp(`${name}=([^,>]+)`).exec(line)?.[1];

/** Reads `<name>.qspy.txt` (the reference qspy's text of the capture). */
export function qspySequence(name: string): QspySequence {
  const lines = qspyLines(name).filter((l) => !/^\s+\w+-Dict /.test(l));
  const result: QspySequence = {
    publishes: [],
    timeEvents: 0,
    initialTransitions: 0,
    transitions: 0,
    posts: 0,
    directPosts: 0,
  };
  let publish: { sig: string; deliveries: number } | undefined;
  let timeEvent: { sig: string; ao: string } | undefined;
  for (const line of lines) {
    // A line is `<timestamp> <what> ...`, `===RTC===> <what> ...` or `           <what> ...`.
    const tokens = line.trim().split(/\s+/);
    const what = /^(\d+|===RTC===>)$/.test(tokens[0]) ? tokens[1] : tokens[0];
    if (what === 'AO-Post' || what === 'AO-LIFO') {
      result.posts++;
      const sig = field(line, 'Sig');
      if (publish && sig === publish.sig) {
        publish.deliveries++;
        continue;
      }
      if (timeEvent && sig === timeEvent.sig && field(line, 'Obj') === timeEvent.ao) {
        timeEvent = undefined;
        continue;
      }
      result.directPosts++;
    }
    publish = undefined;
    timeEvent = undefined;
    if (what === 'QF-Pub') {
      publish = { sig: field(line, 'Sig') ?? '', deliveries: 0 };
      result.publishes.push(publish);
    } else if (/^TE\d-Post$/.test(what)) {
      result.timeEvents++;
      timeEvent = { sig: field(line, 'Sig') ?? '', ao: field(line, 'AO') ?? '' };
    } else if (what === 'Init===>') result.initialTransitions++;
    else if (what === '===>Tran') result.transitions++;
  }
  return result;
}
