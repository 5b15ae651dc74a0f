import type { JsMsg } from '@tracehub/bus';

/**
 * Waits `ms` before a retry, keeping the messages of `held()` ours meanwhile (`working()`,
 * well within the ack wait): however long Postgres is away, JetStream does not deliver them
 * again. They are acked only after a commit.
 */
export async function waitHolding(ms: number, ackWaitMs: number, held: () => Iterable<JsMsg>): Promise<void> {
  const hold = () => {
    for (const msg of held()) msg.working();
  };
  hold();
  const timer = setInterval(hold, Math.max(100, Math.floor(ackWaitMs / 3)));
  try {
    await new Promise((r) => setTimeout(r, ms));
  } finally {
    clearInterval(timer);
  }
}
