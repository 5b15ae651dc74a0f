/**
 * How many links one worker of a group takes: of `links` links over `workers` workers alive,
 * the first `links mod workers` workers (by rank, 0-based) take ⌈links/workers⌉ and the others
 * ⌊links/workers⌋, so no two differ by more than one and the shares add up to `links`.
 */
export function fairShare(links: number, workers: number, rank: number): number {
  if (workers <= 0) return links;
  return Math.floor(links / workers) + (rank < links % workers ? 1 : 0);
}
