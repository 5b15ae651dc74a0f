import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CommandOutput } from '../command-io.js';
import { keepSettingsChange, settingsText } from '../link-settings-change.js';
import { addConnectionOptions, linkCommand } from './connections.js';
import { cannotQuery, withDatabase } from './database.js';
import {
  type ApiOptions,
  addApiOptions,
  downloadFromApi,
  linkSettingsThroughApi,
  linkThroughApi,
  putSettingsThroughApi,
} from './through-api.js';

interface DictOptions extends ApiOptions {
  rig: string;
  link: string;
  session: string;
  output: string;
  databaseUrl: string;
}

/**
 * `tracehub dict import|export`: qspy `.dic` files. Import gives a QS link a dictionary file
 * (setting `dictionaries`, used from its next session as `qspy -d <file>` uses one); export
 * writes what qspy's SAVE_DICT would have written at the end of a stored session.
 */
export function registerDict(program: Command): void {
  const dict = program.command('dict').description('import or export qspy .dic dictionary files');

  const importCmd = linkCommand(
    dict,
    'import',
    "give a QS link a qspy .dic file: its names from the link's next session on",
  ).argument('<file>', 'a .dic file written by qspy -d (SAVE_DICT) or by tracehub dict export');
  addConnectionOptions(importCmd, { db: true });
  addApiOptions(importCmd);
  importCmd.action(async (file: string, opts: DictOptions) => {
    const text = readFileSync(file, 'latin1');
    const [{ getLinkByName }, { linkSettingsFromText }, { parseDictionaryFile }] = await Promise.all([
      import('@tracehub/db'),
      import('@tracehub/contracts'),
      import('@tracehub/qs'),
    ]);
    let entries: number;
    try {
      const parsed = parseDictionaryFile(text);
      entries = parsed.obj.length + parsed.fun.length + parsed.usr.length + parsed.sig.length;
    } catch (err) {
      throw new Error(`${file} is not a .dic file qspy would read: ${(err as Error).message}`);
    }
    const noLink = `no link ${opts.rig}/${opts.link} is known (create it with tracehub link set --protocol qs)`;
    /** The link's settings with the file's dictionaries instead of any it had. */
    const withFile = (row: { protocol: string }, current: Record<string, unknown>) => {
      if (row.protocol !== 'qs')
        throw new Error(`link ${opts.rig}/${opts.link} is ${row.protocol}: .dic files are for QS links`);
      return linkSettingsFromText('qs', [
        ...Object.entries(settingsText(current)).filter(([name]) => name !== 'dictionaries'),
        ['dictionaries', text],
      ]);
    };
    const done = `${opts.rig}/${opts.link}: ${entries} names from ${file} (applies from the next session)\n`;
    if (opts.api) {
      const api = { ...opts, api: opts.api };
      const row = await linkThroughApi(api, opts.rig, opts.link);
      if (!row) throw new Error(noLink);
      const settings = withFile(row, (await linkSettingsThroughApi(api, row.id)).settings);
      await putSettingsThroughApi(api, row.id, settings, 'next-session');
      process.stdout.write(done);
      return;
    }
    await withDatabase(
      opts.databaseUrl,
      'dict',
      async (db) => {
        const row = await getLinkByName(db, opts.rig, opts.link).catch((err: Error) => {
          throw cannotQuery(opts.databaseUrl, err);
        });
        if (!row) throw new Error(noLink);
        await keepSettingsChange(db, row.id, withFile(row, row.settings), 'next-session');
        process.stdout.write(done);
      },
      1,
    );
  });

  const exportCmd = dict
    .command('export')
    .description('write the dictionaries of a stored QS session as a qspy .dic file')
    .requiredOption('--session <id>', 'session id')
    .option('-o, --output <file>', "file to write ('-': standard output)", '-');
  addConnectionOptions(exportCmd, { db: true });
  addApiOptions(exportCmd);
  exportCmd.action(async (opts: DictOptions) => {
    if (opts.api) {
      const out = new CommandOutput(opts.output === '-' ? process.stdout : createWriteStream(opts.output));
      const path = `/sessions/${encodeURIComponent(opts.session)}/dictionaries.dic`;
      await downloadFromApi({ ...opts, api: opts.api }, path, {}, out);
      out.close();
      return;
    }
    const [{ getSession, getLinkByName, sessionRecords }, { dictionaryFileOfRecords }] = await Promise.all([
      import('@tracehub/db'),
      import('@tracehub/qs'),
    ]);
    await withDatabase(opts.databaseUrl, 'dict', async (db) => {
      const session = await getSession(db, opts.session).catch((err: Error) => {
        throw cannotQuery(opts.databaseUrl, err);
      });
      if (!session) throw new Error(`no session '${opts.session}' is stored`);
      if (session.protocol !== 'qs')
        throw new Error(`session '${session.id}' is ${session.protocol}: .dic files are QS`);
      // The session's target infos and dictionary records, decoded again in order with the
      // link's sizes: the decoder then holds exactly what qspy would have saved.
      const link = await getLinkByName(db, session.rig, session.link);
      const sizes = Object.fromEntries(
        Object.entries(link?.settings ?? {}).filter(([, value]) => typeof value === 'number'),
      );
      const text = Buffer.from(await dictionaryFileOfRecords(sessionRecords(db, session.id), sizes), 'latin1');
      if (opts.output === '-') process.stdout.write(text);
      else writeFileSync(opts.output, text);
    });
  });
}
