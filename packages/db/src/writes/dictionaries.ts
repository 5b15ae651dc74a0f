import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

export interface DictionaryEntry {
  session: string;
  kind: string;
  key: string;
  name: string;
}

/** Stores dictionary entries; an entry sent again with another name takes the new name. */
export async function upsertDictionaryEntries(
  db: Kysely<Database>,
  entries: readonly DictionaryEntry[],
): Promise<void> {
  if (entries.length === 0) return;
  // One statement may not update a row twice: of entries with the same key, the last wins.
  const latest = new Map<string, DictionaryEntry>();
  for (const e of entries) latest.set(`${e.session}\u0000${e.kind}\u0000${e.key}`, e);
  await db
    .insertInto('dictionaries')
    .values([...latest.values()].map((e) => ({ session: e.session, kind: e.kind, key: e.key, name: e.name })))
    .onConflict((oc) => oc.columns(['session', 'kind', 'key']).doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
    .execute();
}
