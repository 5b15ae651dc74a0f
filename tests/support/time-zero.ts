/** Time zero of the tests' stored sessions and records, ns since the epoch: 2025-11-24T16:00:00Z. */
export const T0 = 1_764_000_000_000_000_000n;
