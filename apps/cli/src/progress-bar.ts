/**
 * A one-line progress bar for long work, on stderr when it is a terminal (nothing otherwise):
 * `[#########...........]  45%  16.2/36.0 MB  48.1 MB/s`. Redrawn at most ten times a second.
 */
/** Where the bar is drawn: stderr, or a stream a test passes (a bar needs a terminal). */
export type ProgressOutput = { write(text: string): unknown; isTTY?: boolean };

export class ProgressBar {
  private lastDraw = 0;
  private readonly started = performance.now();

  private constructor(
    private readonly out: ProgressOutput,
    private readonly total: number,
    private readonly label: string,
    private readonly unit: { name: string; size: number } = { name: 'MB', size: 1e6 },
  ) {}

  /** A bar for `total` bytes, or undefined when `out` is not a terminal or the work is small. */
  static forBytes(total: number, label = '', out: ProgressOutput = process.stderr, minBytes = 4 << 20) {
    return out.isTTY === true && total >= minBytes ? new ProgressBar(out, total, label) : undefined;
  }

  /** A bar for `total` records (shown in thousands), or undefined when `out` is not a terminal or the work is small. */
  static forRecords(total: number, label = '', out: ProgressOutput = process.stderr, minRecords = 100_000) {
    return out.isTTY === true && total >= minRecords
      ? new ProgressBar(out, total, label, { name: 'k records', size: 1e3 })
      : undefined;
  }

  /**
   * For work another process does without telling how far it is: `label  12 s` redrawn each
   * second on a terminal (undefined otherwise). `done` ends the line; `stop` stops the clock.
   */
  static waiting(label: string, out: ProgressOutput = process.stderr) {
    if (out.isTTY !== true) return undefined;
    const started = performance.now();
    const draw = () => out.write(`\r${label}  ${Math.round((performance.now() - started) / 1000)} s `);
    draw();
    const timer = setInterval(draw, 1000);
    timer.unref();
    return {
      done: () => {
        clearInterval(timer);
        draw();
        out.write('\n');
      },
      stop: () => clearInterval(timer),
    };
  }

  update(done: number): void {
    const now = performance.now();
    if (now - this.lastDraw < 100 && done < this.total) return;
    this.lastDraw = now;
    const width = 30;
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const filled = Math.round(fraction * width);
    const seconds = Math.max(0.001, (now - this.started) / 1000);
    const scaled = (n: number) => (n / this.unit.size).toFixed(1);
    const unit = this.unit.name;
    this.out.write(
      `\r${this.label}[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}%  ` +
        `${scaled(done)}/${scaled(this.total)} ${unit}  ${scaled(done / seconds)} ${unit}/s `,
    );
  }

  done(): void {
    this.update(this.total);
    this.out.write('\n');
  }
}
