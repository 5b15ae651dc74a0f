/** A readiness check: resolves true (or void) when fine; false or a throw means not ready. */
export type ReadinessCheck = () => boolean | undefined | Promise<boolean | undefined>;

/** What `/readyz` answers: ready, not ready yet or any more (the state), or not ready because checks fail. */
export type ReadinessReport =
  | { status: 'ready' }
  | { status: 'starting' | 'stopping' }
  | { status: 'not ready'; failing: string[] };

/**
 * Whether a service can take work: not until it has started, not while it stops, and not while
 * any of its named checks (NATS connected, Postgres answering) fails or is slow to say.
 */
export class Readiness {
  private state: 'starting' | 'ready' | 'stopping' = 'starting';
  private readonly checks = new Map<string, ReadinessCheck>();

  /** `checkTimeoutMs`: how long one check may take before it counts as failed. */
  constructor(private readonly checkTimeoutMs = 1000) {}

  setReady(ready: boolean): void {
    this.state = ready ? 'ready' : 'stopping';
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Adds a check, or replaces the one of that name. */
  addCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  async report(): Promise<ReadinessReport> {
    if (this.state !== 'ready') return { status: this.state };
    const failing = await this.failingChecks();
    return failing.length > 0 ? { status: 'not ready', failing } : { status: 'ready' };
  }

  private async failingChecks(): Promise<string[]> {
    const results = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), this.checkTimeoutMs);
        });
        try {
          const ok = await Promise.race([Promise.resolve().then(check), timeout]);
          return ok === false ? name : undefined;
        } catch {
          return name;
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    return results.filter((name): name is string => name !== undefined);
  }
}
