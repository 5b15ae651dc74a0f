import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WebhookTarget } from '@tracehub/api-contract';
import { Backoff, type Log } from '@tracehub/contracts';

/** The header that carries the body's HMAC-SHA256 under the webhook's secret: `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'x-tracehub-signature';
/** One id per state change, the same on every retry: a receiver drops the repeats by it. */
export const DELIVERY_HEADER = 'x-tracehub-delivery';

export const signBody = (secret: string, body: string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** What a webhook receives: `text` for Slack, Teams and Mattermost, the rest for anything else. */
export interface AlertNotice {
  /** firing or resolved. */
  state: 'firing' | 'resolved';
  text: string;
  rule: { id: string; name: string };
  alert: {
    id: number;
    rig: string;
    link: string;
    summary: string;
    session: string | null;
    seq: number | null;
    at: string;
    firedAt: string;
    resolvedAt: string | null;
    dashboardUrl: string;
  };
}

export interface WebhookCounts {
  delivered: number;
  failedAttempts: number;
  givenUp: number;
}

/**
 * Sends alert notices to webhooks: one POST per state change and target, retried with
 * doubling waits while the receiver fails (a non-2xx answer, a refused connection, a
 * timeout), up to the target's retries. Deliveries run in the background: a slow receiver
 * never holds up the rules.
 */
export class WebhookSender {
  readonly counts: WebhookCounts = { delivered: 0, failedAttempts: 0, givenUp: 0 };
  private readonly pending = new Set<Promise<void>>();
  /** Aborted by `stop`: ends the waits between attempts, so that shutdown does not sit them out. */
  private readonly stopping = new AbortController();

  constructor(
    private readonly log: Log,
    private readonly firstRetryMs = 500,
  ) {}

  send(targets: readonly WebhookTarget[], notice: AlertNotice): void {
    if (this.stopping.signal.aborted) return;
    const body = JSON.stringify(notice);
    const delivery = `${notice.alert.id}-${notice.state}`;
    for (const target of targets) {
      const sending = this.deliver(target, body, delivery).finally(() => this.pending.delete(sending));
      this.pending.add(sending);
    }
  }

  /** Resolves once every delivery under way has ended (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Stops retrying: a delivery waiting to try again gives up now (logged as given up). */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.settled();
  }

  private async deliver(target: WebhookTarget, body: string, delivery: string): Promise<void> {
    const retries = target.retries ?? 4;
    const backoff = new Backoff({ fromMs: this.firstRetryMs, maxMs: 30_000 });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'tracehub-alerts',
      [DELIVERY_HEADER]: delivery,
    };
    if (target.secret) headers[SIGNATURE_HEADER] = signBody(target.secret, body);
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const res = await fetch(target.url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(target.timeoutMs ?? 5000),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) {
          this.counts.delivered++;
          return;
        }
        failure = `answered ${res.status}`;
      } catch (err) {
        failure = failureOf(err, target.url);
      }
      this.counts.failedAttempts++;
      const stopping = this.stopping.signal;
      if (attempt < retries && !stopping.aborted) {
        const waitMs = backoff.next();
        this.log.info(
          { webhook: redactedUrl(target.url), delivery, failure, waitMs },
          'alert webhook failed; retrying',
        );
        // `stop` ends the wait early (an AbortError), and the delivery is given up below.
        await sleep(waitMs, undefined, { signal: stopping }).catch(() => undefined);
        if (!stopping.aborted) continue;
      }
      this.counts.givenUp++;
      this.log.warn({ webhook: redactedUrl(target.url), delivery, failure }, 'alert webhook failed; given up');
      return;
    }
  }
}

/**
 * Why an attempt failed, for the log: fetch's own message with the URL cut to its origin (fetch
 * quotes the whole URL when it refuses one, credentials and path secrets included), and the
 * network's reason behind a bare "fetch failed" (connect ECONNREFUSED ...).
 */
function failureOf(err: unknown, url: string): string {
  const { message, cause } = err as Error & { cause?: { message?: unknown } };
  const said = typeof cause?.message === 'string' ? `${message}: ${cause.message}` : message;
  return said.replaceAll(url, redactedUrl(url));
}

/** A webhook URL as logs show it: without its path and query (Slack puts its secret there). */
export function redactedUrl(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(bad url)';
  }
}
