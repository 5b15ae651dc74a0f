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

/**
 * The codec settings of many links in one statement, keyed `rig/link`; a link that is not
 * known has no entry.
 */
export async function getLinksSettings(
  db: Kysely<Database>,
  links: ReadonlyArray<{ rig: string; link: string }>,
): Promise<Map<string, LinkSettings>> {
  const found = new Map<string, LinkSettings>();
  if (links.length === 0) return found;
  const rows = await db
    .selectFrom('links')
    .select(['rig', 'name', 'settings'])
    .where((eb) =>
      eb(
        eb.refTuple('rig', 'name'),
        'in',
        links.map((l) => eb.tuple(l.rig, l.link)),
      ),
    )
    .execute();
  for (const row of rows) found.set(`${row.rig}/${row.name}`, row.settings);
  return found;
}
