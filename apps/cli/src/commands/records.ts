import { TextLineBatch, textEncodingOf } from '@tracehub/contracts';
import type { Command } from 'commander';
import { CommandOutput } from '../command-io.js';
import { addConnectionOptions } from './connections.js';
import { cannotQuery, withDatabase } from './database.js';
import { type ApiOptions, addApiOptions, downloadFromApi } from './through-api.js';

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
      "print a stored session's records from Postgres: --session ID, or --rig and --link for the link's latest",
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
    if (opts.api) {
      if (!opts.session)
        throw new Error(
          'through the API, say which session: --session ID (GET /api/v1/sessions?rig=R&link=L lists them)',
        );
      const out = new CommandOutput(process.stdout);
      const format = opts.format === 'json' ? 'ndjson' : 'qspy';
      await downloadFromApi(
        { ...opts, api: opts.api },
        `/sessions/${encodeURIComponent(opts.session)}/export`,
        { format },
        out,
      );
      out.close();
      return;
    }
    const waitMs = Number(opts.wait) * 1000;
    if (!Number.isFinite(waitMs) || waitMs < 0) throw new Error(`bad --wait '${opts.wait}': a number of seconds`);
    // Loaded here, not at start-up: every other command would pay for the Postgres client.
    const { getSession, isSessionComplete, latestSession, rowToTraceRecord, sessionRecords } = await import(
      '@tracehub/db'
    );
    await withDatabase(opts.databaseUrl, 'records', async (db) => {
      const deadline = Date.now() + waitMs;
      const find = () =>
        opts.session ? getSession(db, opts.session) : latestSession(db, opts.rig ?? '', opts.link ?? '');
      let session = await find().catch((err: Error) => {
        throw cannotQuery(opts.databaseUrl, err);
      });
      while ((!session || !isSessionComplete(session)) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        session = await find();
      }
      if (!session) {
        throw new Error(
          opts.session
            ? `no session '${opts.session}' is stored`
            : `link ${opts.rig}/${opts.link} has no stored session`,
        );
      }
      if ((opts.rig && session.rig !== opts.rig) || (opts.link && session.link !== opts.link)) {
        throw new Error(
          `session '${session.id}' belongs to ${session.rig}/${session.link}, not ${opts.rig}/${opts.link}`,
        );
      }
      if (!isSessionComplete(session)) {
        process.stderr.write(
          `warning: session ${session.id} is not completely stored yet (${session.record_count} records so far${
            session.ended_at ? `, of ${session.record_total}` : ', still open'
          })\n`,
        );
      }
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
