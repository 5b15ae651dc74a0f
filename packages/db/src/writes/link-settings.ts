import type { Kysely, Selectable } from 'kysely';
import type { Database, LinkSettings, LinkSettingsChangesTable } from '../database.js';

export interface LinkSettingsChange {
  linkId: number;
  settings: LinkSettings;
  /** Who made the change (a name, a token fingerprint, an OS user). */
  changedBy: string;
  /** Through what: `api`, `cli`, `dashboard`. */
  via: string;
  applies: 'next-session' | 'now';
}

export type LinkSettingsChangeRow = Selectable<LinkSettingsChangesTable>;

/**
 * Replaces a link's settings document and keeps the change (who, when, through what, the
 * document before and after) in one transaction. Returns the change, or `undefined` when
 * there is no such link.
 */
export async function setLinkSettings(
  db: Kysely<Database>,
  change: LinkSettingsChange,
): Promise<LinkSettingsChangeRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const link = await trx
      .selectFrom('links')
      .select('settings')
      .where('id', '=', change.linkId)
      .forUpdate()
      .executeTakeFirst();
    if (!link) return undefined;
    await trx.updateTable('links').set({ settings: change.settings }).where('id', '=', change.linkId).execute();
    return trx
      .insertInto('link_settings_changes')
      .values({
        link_id: change.linkId,
        changed_by: change.changedBy,
        via: change.via,
        applies: change.applies,
        previous: link.settings,
        settings: change.settings,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

/** A link's settings changes, newest first. */
export async function linkSettingsChanges(
  db: Kysely<Database>,
  linkId: number,
  limit = 100,
): Promise<LinkSettingsChangeRow[]> {
  return db
    .selectFrom('link_settings_changes')
    .selectAll()
    .where('link_id', '=', linkId)
    .orderBy('changed_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** A link by rig and name, or `undefined`. */
export async function getLinkByName(db: Kysely<Database>, rig: string, name: string) {
  return db.selectFrom('links').selectAll().where('rig', '=', rig).where('name', '=', name).executeTakeFirst();
}
