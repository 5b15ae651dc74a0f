import { hostname, userInfo } from 'node:os';
import type { LinkSettingsDocument } from '@tracehub/contracts';
import type { createDb } from '@tracehub/db';

/** A link's settings as the name/value text `linkSettingsFromText` reads (lists comma-separated). */
export function settingsText(settings: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(settings).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : String(value)]),
  );
}

/** Keeps a change of a link's settings made from the command line, with who made it. */
export async function keepSettingsChange(
  db: ReturnType<typeof createDb>,
  linkId: number,
  settings: LinkSettingsDocument,
  applies: 'now' | 'next-session',
): Promise<void> {
  const { setLinkSettings } = await import('@tracehub/db');
  await setLinkSettings(db, {
    linkId,
    settings,
    changedBy: `${userInfo().username}@${hostname()}`,
    via: 'cli',
    applies,
  });
}
