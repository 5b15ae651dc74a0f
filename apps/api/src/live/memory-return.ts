import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * V8's full collection, without the `--expose-gc` flag on the command line (the api runs as
 * `node dist/main.js` in every deployment): the flag set at run time, the function taken from a
 * fresh context, which sees it.
 */
function fullCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/**
 * Gives the memory of live readers back when they leave. Slow readers (a live-tail client or a
 * PalmTrace client that stops reading) fill the heap with what they were sent; when they go,
 * their outlets are cleared at once, but V8 collects that garbage and shrinks its heap only
 * under the next allocation pressure, which an api with no reader left may not see for hours:
 * measured, 200 never-reading SSE clients and 200 PalmTrace clients left 360 MB resident with
 * 174 MB of heap in use, all garbage (a full collection brought it to 34 MB). So: every
 * `intervalMs`, if readers left since the last look, one full collection.
 */
export class MemoryReturn {
  private timer: NodeJS.Timeout | null = null;
  private lastDeparted = 0;
  private readonly collect = fullCollection();

  /**
   * @param departed live readers that have left so far, in all
   * @param collected told after each full collection (a metric)
   */
  constructor(
    private readonly departed: () => number,
    private readonly collected: () => void = () => {},
    private readonly intervalMs = 2000,
  ) {}

  start(): void {
    this.lastDeparted = this.departed();
    this.timer = setInterval(() => this.look(), this.intervalMs);
    this.timer.unref();
  }

  /** One look: a full collection when readers left since the last one. */
  look(): void {
    const departed = this.departed();
    if (departed > this.lastDeparted) {
      this.collect();
      this.collected();
    }
    this.lastDeparted = departed;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
