import type { Kysely } from 'kysely';
import type { Database } from '../database.js';

/**
 * Keeps the link settings the gateway sent with a session's chunks (`th-settings`), which the
 * decoder service lays over the link's stored ones. Every chunk of a session carries the same
 * (new settings at the gateway start a new session), so writing them again changes nothing.
 */
export async function setSessionLinkSettings(
  db: Kysely<Database>,
  session: string,
  settings: Record<string, unknown>,
): Promise<void> {
  await db.updateTable('sessions').set({ link_settings: settings }).where('id', '=', session).execute();
}
