/** A readiness check: resolves true (or void) when fine; false or a throw means not ready. */
export type ReadinessCheck = () => boolean | undefined | Promise<boolean | undefined>;

export interface ReadinessCheckOptions {
  /**
   * Whether the service can take work without what the check looks at (default true). A
   * check that is not required and fails leaves the service ready, its name listed under
   * `degraded`: the api serves live data without Postgres, and only its queries answer 503.
   */
  required?: boolean;
}

/**
 * What `/readyz` answers: ready (naming what it does without, if anything), starting or
 * stopping (naming, while it starts, what it waits for), or not ready because checks fail.
 */
export type ReadinessReport =
  | { status: 'ready'; degraded?: string[] }
  | { status: 'starting'; failing?: string[] }
  | { status: 'stopping' }
  | { status: 'not ready'; failing: string[] };

/**
 * Whether a service can take work: not until it has started, not while it stops, and not while
 * any of its required checks (NATS connected, Postgres answering) fails or is slow to say.
 */
export class Readiness {
  private state: 'starting' | 'ready' | 'stopping' = 'starting';
  private readonly checks = new Map<string, { check: ReadinessCheck; required: boolean }>();

  /** `checkTimeoutMs`: how long one check may take before it counts as failed. */
  constructor(private readonly checkTimeoutMs = 1000) {}

  setReady(ready: boolean): void {
    this.state = ready ? 'ready' : 'stopping';
  }

  get ready(): boolean {
    return this.state === 'ready';
  }

  /** Adds a check, or replaces the one of that name. */
  addCheck(name: string, check: ReadinessCheck, options: ReadinessCheckOptions = {}): void {
    this.checks.set(name, { check, required: options.required ?? true });
  }

  async report(): Promise<ReadinessReport> {
    if (this.state === 'stopping') return { status: 'stopping' };
    const failing = await this.failingChecks();
    // A service that waits for a server to start says which one.
    if (this.state === 'starting') return failing.length > 0 ? { status: 'starting', failing } : { status: 'starting' };
    const required = failing.filter((name) => this.checks.get(name)?.required);
    if (required.length > 0) return { status: 'not ready', failing: required };
    return failing.length > 0 ? { status: 'ready', degraded: failing } : { status: 'ready' };
  }

  private async failingChecks(): Promise<string[]> {
    const results = await Promise.all(
      [...this.checks].map(async ([name, { check }]) => {
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
