import { readFileSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { redactUrl } from '@tracehub/contracts';
import type { Command } from 'commander';
import { addConnectionOptions } from './connections.js';

interface DictOptions {
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

  const importCmd = dict
    .command('import')
    .description("give a QS link a qspy .dic file: its names from the link's next session on")
    .argument('<file>', 'a .dic file written by qspy -d (SAVE_DICT) or by tracehub dict export')
    .requiredOption('--rig <rig>', 'rig name')
    .requiredOption('--link <link>', 'link name');
  addConnectionOptions(importCmd, { db: true });
  importCmd.action(async (file: string, opts: DictOptions) => {
    const text = readFileSync(file, 'latin1');
    const [{ createDb, getLinkByName, setLinkSettings }, { linkSettingsFromText }, { parseDictionaryFile }] =
      await Promise.all([import('@tracehub/db'), import('@tracehub/contracts'), import('@tracehub/qs')]);
    let entries: number;
    try {
      const parsed = parseDictionaryFile(text);
      entries = parsed.obj.length + parsed.fun.length + parsed.usr.length + parsed.sig.length;
    } catch (err) {
      throw new Error(`${file} is not a .dic file qspy would read: ${(err as Error).message}`);
    }
    const db = createDb(opts.databaseUrl, { applicationName: 'tracehub-dict', maxConnections: 1 });
    try {
      const row = await getLinkByName(db, opts.rig, opts.link).catch((err: Error) => {
        throw new Error(`cannot query Postgres at ${redactUrl(opts.databaseUrl)}: ${err.message}; check DATABASE_URL`);
      });
      if (!row)
        throw new Error(`no link ${opts.rig}/${opts.link} is known (create it with tracehub link set --protocol qs)`);
      if (row.protocol !== 'qs')
        throw new Error(`link ${opts.rig}/${opts.link} is ${row.protocol}: .dic files are for QS links`);
      const document = Object.entries(row.settings).map(([name, value]): [string, string] => [
        name,
        Array.isArray(value) ? value.join(',') : String(value),
      ]);
      const settings = linkSettingsFromText('qs', [
        ...document.filter(([name]) => name !== 'dictionaries'),
        ['dictionaries', text],
      ]);
      await setLinkSettings(db, {
        linkId: row.id,
        settings,
        changedBy: `${userInfo().username}@${hostname()}`,
        via: 'cli',
        applies: 'next-session',
      });
      process.stdout.write(`${row.rig}/${row.name}: ${entries} names from ${file} (applies from the next session)\n`);
    } finally {
      await db.destroy();
    }
  });

  const exportCmd = dict
    .command('export')
    .description('write the dictionaries of a stored QS session as a qspy .dic file')
    .requiredOption('--session <id>', 'session id')
    .option('-o, --output <file>', "file to write ('-': standard output)", '-');
  addConnectionOptions(exportCmd, { db: true });
  exportCmd.action(async (opts: DictOptions) => {
    const [{ createDb, getSession, getLinkByName, sessionRecords }, { dictionaryFileOfRecords }] = await Promise.all([
      import('@tracehub/db'),
      import('@tracehub/qs'),
    ]);
    const db = createDb(opts.databaseUrl, { applicationName: 'tracehub-dict', maxConnections: 2 });
    try {
      const session = await getSession(db, opts.session).catch((err: Error) => {
        throw new Error(`cannot query Postgres at ${redactUrl(opts.databaseUrl)}: ${err.message}; check DATABASE_URL`);
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
    } finally {
      await db.destroy();
    }
  });
}
