import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Log } from '@tracehub/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { type AlertNotice, WebhookSender } from '../src/watch/webhooks.js';

const notice: AlertNotice = {
  state: 'firing',
  text: 'boom',
  rule: { id: 'r', name: 'r' },
  alert: {
    id: 1,
    rig: 'rig',
    link: 'link',
    summary: 'boom',
    session: null,
    seq: null,
    at: '2026-01-01T00:00:00.000Z',
    firedAt: '2026-01-01T00:00:00.000Z',
    resolvedAt: null,
    dashboardUrl: '',
  },
};

/** A log that keeps every line it is given, as JSON. */
function keptLog(): { log: Log; lines: string[] } {
  const lines: string[] = [];
  const keep = (fields: unknown, message?: string) => {
    lines.push(JSON.stringify({ fields, message }));
  };
  const log = { info: keep, warn: keep, error: keep, debug: keep } as unknown as Log;
  return { log, lines };
}

/** A receiver that answers every POST with 500, counting them. */
async function failingReceiver(): Promise<{ url: string; posts: () => number; close: () => Promise<void> }> {
  let posts = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      posts++;
      res.writeHead(500).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook/secret-path`,
    posts: () => posts,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe('the webhook sender', () => {
  const closing: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  it('gives a delivery waiting to retry up when stopped, rather than sitting out its wait', async () => {
    const receiver = await failingReceiver();
    closing.push(receiver.close);
    const { log, lines } = keptLog();
    // A first wait far longer than the test's timeout: only `stop` can end it.
    const sender = new WebhookSender(log, 3_600_000);
    sender.send([{ url: receiver.url, retries: 10 }], notice);
    await expect.poll(() => sender.counts.failedAttempts).toBe(1);
    await sender.stop();
    expect(sender.counts).toEqual({ delivered: 0, failedAttempts: 1, givenUp: 1 });
    expect(receiver.posts()).toBe(1);
    expect(lines.some((l) => l.includes('given up'))).toBe(true);
    // The log names the receiver by its origin only.
    expect(lines.join('\n')).not.toContain('secret-path');
  });

  it("keeps a URL's credentials out of the log when fetch refuses the URL", async () => {
    const { log, lines } = keptLog();
    const sender = new WebhookSender(log, 1);
    sender.send([{ url: 'http://user:hunter22@127.0.0.1:1/hook/secret-path', retries: 0 }], notice);
    await sender.settled();
    expect(sender.counts.givenUp).toBe(1);
    const logged = lines.join('\n');
    expect(logged).toContain('http://127.0.0.1:1');
    expect(logged).not.toContain('hunter22');
    expect(logged).not.toContain('secret-path');
  });
});
