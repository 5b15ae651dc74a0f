import type { LinkSink, LinkSource } from '../link-source.js';
import { LinkWriteError } from '../link-source.js';

/** `-`: bytes from standard input, as one link session that ends at end of input. */
export class StdinSource implements LinkSource {
  readonly kind = 'stdin';
  readonly description = 'stdin';
  readonly finished: Promise<void>;
  private finish!: () => void;

  constructor(private readonly input: NodeJS.ReadableStream = process.stdin) {
    this.finished = new Promise((resolve) => (this.finish = resolve));
  }

  async start(sink: LinkSink): Promise<void> {
    sink.connected(this.description);
    void (async () => {
      try {
        for await (const piece of this.input) {
          await sink.waitForRoom();
          sink.data(typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer));
        }
        sink.disconnected('end of input');
      } catch (err) {
        sink.disconnected(`read error: ${(err as Error).message}`);
      }
      this.finish();
    })();
  }

  async stop(): Promise<void> {}

  write(): Promise<number> {
    return Promise.reject(new LinkWriteError('standard input cannot be written to'));
  }
}
