import { type Database, upsertLink, upsertRig, upsertSession } from '@tracehub/db';
import type { Kysely } from 'kysely';

/** A link session as a message's envelope names it. */
export interface SessionPlace {
  rig: string;
  link: string;
  protocol: string;
  session: string;
  /** Receive time of the message, ns since the epoch, decimal: the session's start when it is new. */
  hostNs: string;
}

/**
 * Registers rigs, links and sessions as messages name them, once per process: a cache of
 * what is registered, bounded (past 10 000 entries it starts afresh; a forgotten entry only
 * costs one idempotent upsert). Entries become known only after the caller's commit.
 */
export class LinkRegistry {
  private readonly rigs = new Set<string>();
  private readonly links = new Set<string>();
  private readonly sessions = new Set<string>();

  /** Upserts what is not known yet, in `trx`; returns what to call after the commit. */
  async ensure(trx: Kysely<Database>, place: SessionPlace, targetInfo: Record<string, unknown> | null = null) {
    const done: Array<() => void> = [];
    const startedAt = hostDate(place.hostNs);
    if (!this.rigs.has(place.rig)) {
      await upsertRig(trx, place.rig, startedAt);
      done.push(() => remember(this.rigs, place.rig));
    }
    const linkKey = `${place.rig}/${place.link}`;
    if (!this.links.has(linkKey)) {
      await upsertLink(trx, { rig: place.rig, name: place.link, protocol: place.protocol });
      done.push(() => remember(this.links, linkKey));
    }
    if (!this.sessions.has(place.session) || targetInfo) {
      await upsertSession(trx, sessionInput(place, targetInfo));
      done.push(() => remember(this.sessions, place.session));
    }
    return () => {
      for (const f of done) f();
    };
  }
}

function sessionInput(place: SessionPlace, targetInfo: Record<string, unknown> | null) {
  return {
    id: place.session,
    rig: place.rig,
    link: place.link,
    protocol: place.protocol,
    startedAt: hostDate(place.hostNs),
    targetInfo,
  };
}

export function hostDate(hostNs: string): Date {
  return new Date(Number(BigInt(hostNs) / 1_000_000n));
}

export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Postgres refused the data itself (bad JSON, a missing or ill-typed field): SQLSTATE class
 * 22 (data exception) or 23 (integrity constraint). Writing it again cannot succeed.
 */
export function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}

function remember(cache: Set<string>, key: string): void {
  if (cache.size >= 10_000) cache.clear();
  cache.add(key);
}
