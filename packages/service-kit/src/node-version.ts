/**
 * The oldest Node tracehub runs on. Older ones fail late and obscurely (a missing export at
 * import time, a missing API mid-run), so every entry point checks first and says so plainly.
 * This module imports nothing, so an entry point can load it before anything that would fail.
 */
export const MIN_NODE_MAJOR = 22;

/** The sentence for a Node older than MIN_NODE_MAJOR; undefined when `version` is new enough. */
export function oldNodeProblem(version: string = process.versions.node): string | undefined {
  const major = Number.parseInt(version, 10);
  if (major >= MIN_NODE_MAJOR) return undefined;
  return `tracehub needs Node ${MIN_NODE_MAJOR} or newer (this is ${major}.x)`;
}

/** On a Node older than MIN_NODE_MAJOR: prints the sentence to stderr and exits 2 (bad configuration). */
export function exitIfNodeTooOld(): void {
  const problem = oldNodeProblem();
  if (problem === undefined) return;
  process.stderr.write(`${problem}\n`);
  process.exit(2);
}
