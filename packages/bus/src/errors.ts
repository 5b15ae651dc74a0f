/** How the bus tells the failures its callers act on apart. */

/**
 * What JetStream answers while a cluster has no leader yet: requests time out, or come back
 * "temporarily unavailable" / "no suitable peers". A server without JetStream answers
 * otherwise (no responders), and is not waited for.
 */
export function isJetStreamNotReady(err: unknown): boolean {
  const e = err as { message?: unknown; name?: unknown } | null;
  return (
    e?.name === 'TimeoutError' ||
    /\btimeout\b|temporarily unavailable|no suitable peers/i.test(String(e?.message ?? ''))
  );
}

/** JetStream's error code for a message its stream would not store (the message says why). */
const STREAM_STORE_FAILED = 10077;

/** True when a publish failed because the stream is full (discard new): the publisher must hold and retry. */
export function isStreamFullError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return code === STREAM_STORE_FAILED || /maximum (bytes|messages) exceeded/i.test(err.message);
}
