import type { Log } from '@tracehub/contracts';
import type { Database } from '@tracehub/db';
import { type Kysely, sql } from 'kysely';

/** What a link's settings say of its records in a Palm Reporter (`palmProcessId`, `palmModule`, `tickRate`). */
export interface LinkPalmIds {
  processId?: number;
  module?: number;
  /** The target's ticks per second (`tickRate`, else an STP link's `tickHz`): turns target time into ms. */
  tickRate?: number;
}

/** The PalmTrace ids of a link, or undefined when its settings give none. */
export type LinkPalmIdsOf = (rig: string, link: string) => LinkPalmIds | undefined;

const isId = (v: unknown, max: number): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= max;

/**
 * The links' PalmTrace ids, read from their settings every `refreshMs` and held in memory:
 * records are encoded in the NATS callback, which must never wait for Postgres. A changed
 * setting shows within a refresh.
 */
export class LinkPalmIdsCache {
  private ids = new Map<string, LinkPalmIds>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly log: Log,
    private readonly refreshMs = 5000,
  ) {}

  readonly of: LinkPalmIdsOf = (rig, link) => this.ids.get(`${rig}/${link}`);

  async start(): Promise<void> {
    // Without them the bridge still serves (with the rigs' own numbers); the next refresh retries.
    await this.refresh().catch((err) =>
      this.log.warn({ err }, 'could not read the links’ PalmTrace settings; will try again'),
    );
    this.timer = setInterval(() => {
      this.refresh().catch((err) =>
        this.log.warn({ err }, 'could not read the links’ PalmTrace settings; keeping the last'),
      );
    }, this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /**
   * Reads every link's ids: its stored settings with those its gateway gave its latest
   * session laid over them (a TRACEHUB_LINKS address, `tracehub replay` flags), as the
   * decoders lay them.
   */
  async refresh(): Promise<void> {
    const named = sql<boolean>`?| array['palmProcessId', 'palmModule', 'tickRate', 'tickHz']`;
    const rows = await this.db
      .selectFrom('links as l')
      .leftJoinLateral(
        (eb) =>
          eb
            .selectFrom('sessions')
            .select('link_settings')
            .whereRef('sessions.rig', '=', 'l.rig')
            .whereRef('sessions.link', '=', 'l.name')
            .orderBy('started_at', 'desc')
            .limit(1)
            .as('s'),
        (join) => join.onTrue(),
      )
      .select(['l.rig', 'l.name', 'l.settings', 's.link_settings'])
      .where((eb) => eb.or([sql<boolean>`l.settings ${named}`, sql<boolean>`s.link_settings ${named}`]))
      .execute();
    const ids = new Map<string, LinkPalmIds>();
    for (const { rig, name, settings, link_settings } of rows) {
      const effective: Record<string, unknown> = { ...settings, ...(link_settings ?? {}) };
      const entry: LinkPalmIds = {};
      if (isId(effective.palmProcessId, 0xffffffff)) entry.processId = effective.palmProcessId;
      if (isId(effective.palmModule, 0xffff)) entry.module = effective.palmModule;
      const rate = effective.tickRate ?? effective.tickHz;
      if (typeof rate === 'number' && rate > 0) entry.tickRate = rate;
      ids.set(`${rig}/${name}`, entry);
    }
    this.ids = ids;
  }
}
