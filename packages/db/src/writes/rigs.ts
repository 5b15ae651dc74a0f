import { type Kysely, sql } from 'kysely';
import type { Database, LinkSettings } from '../database.js';

/** Records that a rig exists and was seen at `seenAt` (default now). */
export async function upsertRig(db: Kysely<Database>, name: string, seenAt: Date = new Date()): Promise<void> {
  await db
    .insertInto('rigs')
    .values({ name, first_seen: seenAt, last_seen: seenAt })
    .onConflict((oc) => oc.column('name').doUpdateSet({ last_seen: sql`greatest(rigs.last_seen, excluded.last_seen)` }))
    .execute();
}

export interface LinkInput {
  rig: string;
  name: string;
  protocol: string;
  /** Codec settings; when omitted, the stored settings stay as they are. */
  settings?: LinkSettings;
}

/**
 * Creates or updates a link (and its rig, unless `rigWritten`: the caller upserted it already
 * in this transaction, before any link, as writers that lock rows in one order do); returns
 * the link's id.
 */
export async function upsertLink(
  db: Kysely<Database>,
  link: LinkInput,
  { rigWritten = false }: { rigWritten?: boolean } = {},
): Promise<number> {
  // Inside a caller's transaction, join it; otherwise make one of our own.
  const write = async (trx: Kysely<Database>) => {
    if (!rigWritten)
      await trx
        .insertInto('rigs')
        .values({ name: link.rig })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
    const row = await trx
      .insertInto('links')
      .values({ rig: link.rig, name: link.name, protocol: link.protocol, settings: link.settings ?? {} })
      .onConflict((oc) =>
        oc.columns(['rig', 'name']).doUpdateSet((eb) => ({
          protocol: eb.ref('excluded.protocol'),
          ...(link.settings ? { settings: eb.ref('excluded.settings') } : {}),
        })),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };
  return db.isTransaction ? write(db) : db.transaction().execute(write);
}

/** A link's codec settings, or `undefined` when the link is not known. */
export async function getLinkSettings(
  db: Kysely<Database>,
  rig: string,
  link: string,
): Promise<LinkSettings | undefined> {
  const row = await db
    .selectFrom('links')
    .select('settings')
    .where('rig', '=', rig)
    .where('name', '=', link)
    .executeTakeFirst();
  return row?.settings;
}
