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

  /**
   * Creates the rigs, links and sessions of `places` this process does not know yet, in a
   * short transaction of its own that takes rows in one order (rigs by name, then links by rig
   * and name, then sessions by id), then remembers them. The batch's own transaction then
   * only locks session rows (`lockSessions`, all at once, in id order): no writer ever holds
   * one row while it waits for another in a different order, so two storages writing
   * batches of the same links never deadlock.
   */
  async ensure(db: Kysely<Database>, places: readonly SessionPlace[]): Promise<void> {
    const rigs = new Map<string, Date>();
    const links = new Map<string, SessionPlace>();
    const sessions = new Map<string, SessionPlace>();
    for (const place of places) {
      const startedAt = hostDate(place.hostNs);
      const seen = rigs.get(place.rig);
      if (!this.rigs.has(place.rig) && (!seen || startedAt < seen)) rigs.set(place.rig, startedAt);
      const linkKey = `${place.rig}/${place.link}`;
      if (!this.links.has(linkKey) && !links.has(linkKey)) {
        links.set(linkKey, place);
        // A new link's rig row is written first too: all rigs, then all links.
        if (!seen || startedAt < seen) rigs.set(place.rig, startedAt);
      }
      if (!this.sessions.has(place.session) && !sessions.has(place.session)) sessions.set(place.session, place);
    }
    if (rigs.size + links.size + sessions.size === 0) return;
    await db.transaction().execute(async (trx) => {
      for (const rig of [...rigs.keys()].sort(compareText)) await upsertRig(trx, rig, rigs.get(rig));
      for (const key of [...links.keys()].sort(compareText)) {
        const place = links.get(key)!;
        await upsertLink(trx, { rig: place.rig, name: place.link, protocol: place.protocol }, { rigWritten: true });
      }
      for (const id of [...sessions.keys()].sort(compareText))
        await upsertSession(trx, sessionInput(sessions.get(id)!, null));
    });
    for (const rig of rigs.keys()) remember(this.rigs, rig);
    for (const key of links.keys()) remember(this.links, key);
    for (const id of sessions.keys()) remember(this.sessions, id);
  }

  /** Stores a session's target info (its row is locked by then: the caller ensured it first). */
  async setTargetInfo(trx: Kysely<Database>, place: SessionPlace, targetInfo: Record<string, unknown>) {
    await upsertSession(trx, sessionInput(place, targetInfo));
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

function remember(cache: Set<string>, key: string): void {
  if (cache.size >= 10_000) cache.clear();
  cache.add(key);
}
