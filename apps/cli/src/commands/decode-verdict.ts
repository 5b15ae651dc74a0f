import type { Writable } from 'node:stream';

/**
 * Exit status of `tracehub decode`, whatever the protocol, when the input decoded to nothing at
 * all: no QS frame, no STP message, exception or marker, no SWD message, or no byte. 1 stays for
 * a command that could not run (a bad option, a file that cannot be read).
 */
export const NOTHING_DECODED_EXIT = 2;

/** How a decode went, said at its end: a failure when nothing decoded, else maybe a warning. */
export interface DecodeVerdict {
  /** Why nothing decoded, and what likely fixes it. */
  failure?: string;
  /** What looks wrong although something decoded, and what likely fixes it. */
  warning?: string;
}

/** The verdict on stderr (after the command's summary line); returns the exit status. */
export function reportVerdict(stderr: Writable, verdict: DecodeVerdict): number {
  if (verdict.failure !== undefined) {
    stderr.write(`tracehub: ${verdict.failure}\n`);
    return NOTHING_DECODED_EXIT;
  }
  if (verdict.warning !== undefined) stderr.write(`tracehub: warning: ${verdict.warning}\n`);
  return 0;
}

/** The failure of an empty input, the same for every protocol. */
export const EMPTY_INPUT = 'nothing decoded: the input is empty';
