// A webhook receiver for the alert tests: records every POST, and answers 500 to the first
// attempt of each delivery when told to (so the sender's retries can be seen).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedPost {
  delivery: string;
  signature: string | undefined;
  body: string;
  receivedMs: number;
  answered: number;
}

export class WebhookReceiver {
  readonly posts: ReceivedPost[] = [];
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const delivery = String(req.headers['x-tracehub-delivery']);
      const seen = this.posts.some((p) => p.delivery === delivery);
      const answered = this.options.failFirst && !seen ? 500 : 200;
      this.posts.push({
        delivery,
        signature: req.headers['x-tracehub-signature'] as string | undefined,
        body: Buffer.concat(chunks).toString('utf8'),
        receivedMs: Date.now(),
        answered,
      });
      res.writeHead(answered).end();
    });
  });

  constructor(private readonly options: { failFirst: boolean }) {}

  /** Listens on a port of the system's choosing; resolves with the hook's URL. */
  async listen(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.close(() => r()));
  }
}
