import { TextLineBatch, textEncodingOf } from '@tracehub/contracts';
import type { Command } from 'commander';
import { CommandOutput } from '../command-io.js';
import { addConnectionOptions } from './connections.js';
import { cannotQuery, withDatabase } from './database.js';
import { chooseSession } from './session-choice.js';
import {
  type ApiOptions,
  addApiOptions,
  downloadFromApi,
  latestSessionThroughApi,
  sessionThroughApi,
} from './through-api.js';

interface RecordsOptions extends ApiOptions {
  rig?: string;
  link?: string;
  session?: string;
  wait: string;
  format: string;
  databaseUrl: string;
}

/**
 * `tracehub records --session ID` or `--rig R --link L` (its latest session; with --session
 * too, a check that the session is the link's): a stored session's records, oldest first,
 * one record's text per line (json: NDJSON TraceRecords). With --wait, first waits until the
 * session's end and every one of its records are stored.
 */
export function registerRecords(program: Command): void {
  const cmd = program
    .command('records')
    .description(
      "print a stored session's records (from Postgres or through the API): --session ID, or --rig and --link for the link's latest",
    )
    .option('--session <id>', 'session id (as printed by replay)')
    .option('--rig <rig>', 'rig name (with --link: the link whose latest session)')
    .option('--link <link>', 'link name')
    .option('--wait <seconds>', 'wait up to this long for the whole session to be stored', '0')
    .option('-f, --format <format>', 'text | json', 'text');
  addConnectionOptions(cmd, { db: true });
  addApiOptions(cmd);
  cmd.action(async (opts: RecordsOptions) => {
    if (!opts.session && !(opts.rig && opts.link))
      throw new Error("say which session: --session ID, or --rig and --link for the link's latest session");
    if (opts.format !== 'text' && opts.format !== 'json')
      throw new Error(`bad --format '${opts.format}': use text or json`);
    const waitMs = Number(opts.wait) * 1000;
    if (!Number.isFinite(waitMs) || waitMs < 0) throw new Error(`bad --wait '${opts.wait}': a number of seconds`);
    const choice = { session: opts.session, rig: opts.rig, link: opts.link, waitMs };
    if (opts.api) {
      const api = { ...opts, api: opts.api };
      const session = await chooseSession(choice, async () => {
        const found = opts.session
          ? await sessionThroughApi(api, opts.session)
          : await latestSessionThroughApi(api, opts.rig ?? '', opts.link ?? '');
        return found && { ...found, ended: found.endedAt !== null };
      });
      const out = new CommandOutput(process.stdout);
      const format = opts.format === 'json' ? 'ndjson' : 'qspy';
      await downloadFromApi(api, `/sessions/${encodeURIComponent(session.id)}/export`, { format }, out);
      out.close();
      return;
    }
    // Loaded here, not at start-up: every other command would pay for the Postgres client.
    const { getSession, isSessionComplete, latestSession, rowToTraceRecord, sessionRecords } = await import(
      '@tracehub/db'
    );
    await withDatabase(opts.databaseUrl, 'records', async (db) => {
      const session = await chooseSession(choice, async () => {
        const row = await (opts.session
          ? getSession(db, opts.session)
          : latestSession(db, opts.rig ?? '', opts.link ?? '')
        ).catch((err: Error) => {
          throw cannotQuery(opts.databaseUrl, err);
        });
        return (
          row && {
            id: row.id,
            rig: row.rig,
            link: row.link,
            complete: isSessionComplete(row),
            records: Number(row.record_count),
            recordTotal: row.record_total === null ? null : Number(row.record_total),
            ended: row.ended_at !== null,
          }
        );
      });
      const out = new CommandOutput(process.stdout);
      const lines = new TextLineBatch();
      for await (const row of sessionRecords(db, session.id)) {
        if (opts.format === 'json') lines.add(`${JSON.stringify(rowToTraceRecord(row))}\n`, 'utf8');
        else if (row.text !== '') lines.add(`${row.text}\n`, textEncodingOf(row.protocol));
        if (lines.length > 1 << 16) {
          await out.write(lines.take());
          if (out.readerGone) break;
        }
      }
      await out.write(lines.take());
      out.close();
    });
  });
}
