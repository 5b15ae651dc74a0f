import { setFlagsFromString } from 'node:v8';

/**
 * Under V8 13 (Node 24), has TurboFan optimise a function after 100 000 calls instead of 3 000.
 * A capture calls each of some sixty record parsers a few thousand times, and compiling them
 * again cost more than it saved: after 100 000 calls a DPP capture and the fixtures repeated
 * decoded with 11-15% less CPU time (7 alternated runs), the bench capture and STP streams as
 * fast (apps/cli README). V8 12 (Node 22) counts otherwise: there it cost 30% more, so it is
 * left as it is.
 *
 * Called by the commands that decode in this process (`decode`, `redecode`) once their modules
 * are loaded and the process's streams made (process.stderr loads node:net): a flag away from its
 * default changes V8's flag hash, and Node's cached code of its own modules is rejected for every
 * one loaded after that. Set in the launcher, before loading, the flag cost 8-10 ms of each run's
 * CPU time (25 alternated runs on an empty file); given on the command line, 12-16 ms.
 */
export function tierUpLater(): void {
  if (Number(process.versions.v8.split('.')[0]) === 13) setFlagsFromString('--invocation-count-for-turbofan=100000');
}
