import { readFileSync } from 'node:fs';
import type { LinkSettingsDocument, Protocol } from '@tracehub/contracts';
import type { Command } from 'commander';
import { keepSettingsChange, settingsText } from '../link-settings-change.js';
import { addConnectionOptions, linkCommand, natsConnection } from './connections.js';
import { withDatabase } from './database.js';
import { registerLinkMarkers } from './link-markers.js';
import {
  type ApiOptions,
  addApiOptions,
  linkSettingsThroughApi,
  linkThroughApi,
  putSettingsThroughApi,
} from './through-api.js';

interface LinkOptions extends ApiOptions {
  rig: string;
  link: string;
  databaseUrl: string;
  natsUrl: string;
  busPrefix: string;
  protocol?: string;
  now?: boolean;
  clear?: boolean;
  format?: string;
}

/**
 * `tracehub link show|set`: a link's settings document and its history, straight from
 * Postgres; `set name=value ...` changes settings (`name=` removes one) and keeps the change.
 */
export function registerLink(program: Command): void {
  const link = program.command('link').description("show or change a link's settings");
  const show = linkCommand(link, 'show', "print a link's settings and who changed them when").option(
    '-f, --format <format>',
    'text | json',
    'text',
  );
  addConnectionOptions(show, { db: true });
  addApiOptions(show);
  show.action(async (opts: LinkOptions) => {
    const unknown = `no link ${opts.rig}/${opts.link} is known (it appears once it has streamed)`;
    if (opts.api) {
      const api = { ...opts, api: opts.api };
      const row = await linkThroughApi(api, opts.rig, opts.link);
      if (!row) throw new Error(unknown);
      const { settings, history } = await linkSettingsThroughApi(api, row.id);
      printLink({ id: row.id, rig: row.rig, link: row.name, protocol: row.protocol, settings, history }, opts.format);
      return;
    }
    const { getLinkByName, linkSettingsChanges } = await import('@tracehub/db');
    await withDatabase(
      opts.databaseUrl,
      'link',
      async (db) => {
        const row = await getLinkByName(db, opts.rig, opts.link);
        if (!row) throw new Error(unknown);
        const history = (await linkSettingsChanges(db, row.id)).map((h) => ({
          at: h.changed_at.toISOString(),
          by: h.changed_by,
          via: h.via,
          applies: h.applies,
          previous: h.previous,
          settings: h.settings,
        }));
        printLink(
          { id: row.id, rig: row.rig, link: row.name, protocol: row.protocol, settings: row.settings, history },
          opts.format,
        );
      },
      1,
    );
  });

  const set = linkCommand(link, 'set', 'change settings of a link: name=value (name= removes a setting)')
    .argument('<settings...>', 'name=value pairs, e.g. objPtrSize=8 sigSize=1, littleEndianMasters=0x11,48')
    .option('-p, --protocol <protocol>', 'qs | stp | swd: creates the link when it is not known yet')
    .option('--clear', 'start from no settings instead of the current ones')
    .option('--now', 'apply at once: the gateway starts a new session on the same connection');
  addConnectionOptions(set, { db: true, nats: true });
  addApiOptions(set);
  set.action(async (pairs: string[], opts: LinkOptions) => {
    if (opts.api) {
      await setThroughApi(pairs, { ...opts, api: opts.api });
      return;
    }
    const [{ getLinkByName, upsertLink }, { isProtocol }] = await Promise.all([
      import('@tracehub/db'),
      import('@tracehub/contracts'),
    ]);
    if (opts.protocol !== undefined && !isProtocol(opts.protocol)) {
      throw new Error(`unknown protocol '${opts.protocol}': use qs, stp or swd`);
    }
    await withDatabase(
      opts.databaseUrl,
      'link',
      async (db) => {
        let row = await getLinkByName(db, opts.rig, opts.link);
        if (!row && opts.protocol) {
          await upsertLink(db, { rig: opts.rig, name: opts.link, protocol: opts.protocol });
          row = await getLinkByName(db, opts.rig, opts.link);
        }
        if (!row) throw new Error(`no link ${opts.rig}/${opts.link} is known: give --protocol to create it`);
        const settings = await changedSettings(row.protocol as Protocol, opts.clear ? {} : row.settings, pairs);
        await keepSettingsChange(db, row.id, settings, opts.now ? 'now' : 'next-session');
        let applied = 'from the next session';
        if (opts.now) applied = await askForNewSession(opts, row.rig, row.name);
        process.stdout.write(`${row.rig}/${row.name}: ${JSON.stringify(settings)} (applies ${applied})\n`);
      },
      1,
    );
  });
  registerLinkMarkers(link);
}

/** `current` with the `name=value` pairs over it (`name=` removes one), validated for `protocol`. */
async function changedSettings(
  protocol: Protocol,
  current: Record<string, unknown>,
  pairs: string[],
): Promise<LinkSettingsDocument> {
  const { linkSettingsFromText } = await import('@tracehub/contracts');
  const document = settingsText(current);
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`bad setting '${pair}': write it as name=value`);
    const name = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (value === '') delete document[name];
    else document[name] = value;
  }
  // A dictionaries value of one line is a .dic file's path, read here.
  return linkSettingsFromText(protocol, Object.entries(document), (path) => readFileSync(path, 'latin1'));
}

/** A link's settings and their changes, newest first, as `link show` prints them (the same from Postgres and the API). */
interface LinkView {
  id: number;
  rig: string;
  link: string;
  protocol: string;
  settings: Record<string, unknown>;
  history: Array<{ at: string; by: string; via: string; applies: string; previous: unknown; settings: unknown }>;
}

function printLink(view: LinkView, format: string | undefined): void {
  if (format === 'json') {
    process.stdout.write(`${JSON.stringify(view)}\n`);
    return;
  }
  const lines = [`${view.rig}/${view.link} (${view.protocol}, id ${view.id})`];
  const entries = Object.entries(view.settings);
  if (entries.length === 0) lines.push('  no settings: every value is the codec default');
  for (const [name, value] of entries) lines.push(`  ${name} = ${JSON.stringify(value)}`);
  if (view.history.length > 0) lines.push('changes, newest first:');
  for (const h of view.history) {
    lines.push(`  ${h.at}  ${h.by} via ${h.via} (${h.applies}): ${JSON.stringify(h.settings)}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** `link set` through the API: the link's document read, changed and put back (the API keeps who and when). */
async function setThroughApi(pairs: string[], opts: LinkOptions & { api: string }): Promise<void> {
  const link = await linkThroughApi(opts, opts.rig, opts.link);
  if (!link)
    throw new Error(
      opts.protocol
        ? `no link ${opts.rig}/${opts.link} is known to the API, and the API creates no links: start the link's gateway (a link is known once it has streamed), or create it with --database-url (Postgres access) instead of --api`
        : `no link ${opts.rig}/${opts.link} is known to the API: a link is known once its gateway ran (creating one with --protocol needs --database-url)`,
    );
  const current = await linkSettingsThroughApi(opts, link.id);
  const settings = await changedSettings(link.protocol as Protocol, opts.clear ? {} : current.settings, pairs);
  const reply = await putSettingsThroughApi(opts, link.id, settings, opts.now ? 'now' : 'next-session');
  const applied =
    reply.applies === 'now'
      ? `now: session ${reply.session}`
      : `from the next session${reply.note ? ` (${reply.note})` : ''}`;
  process.stdout.write(`${opts.rig}/${opts.link}: ${JSON.stringify(settings)} (applies ${applied})\n`);
}

/** Asks the link's gateway to start a new session; says what happened. */
async function askForNewSession(opts: LinkOptions, rig: string, link: string): Promise<string> {
  const { connectBus, requestControl } = await import('@tracehub/bus');
  const bus = await connectBus({ ...natsConnection(opts), name: 'tracehub-link', prefix: opts.busPrefix });
  try {
    const reply = await requestControl(bus, { rig, link }, { newSession: 'link settings changed' }, 3000);
    return reply.ok ? `now: session ${reply.session}` : `from the next session (gateway: ${reply.error})`;
  } catch {
    return 'from the next session (no gateway answered for the link)';
  } finally {
    await bus.close();
  }
}
