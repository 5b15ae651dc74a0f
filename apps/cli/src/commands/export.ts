import { createWriteStream } from 'node:fs';
import { TextLineBatch, textEncodingOf } from '@tracehub/contracts';
import type { Command } from 'commander';
import { CommandOutput } from '../command-io.js';
import { ProgressBar } from '../progress-bar.js';
import { addConnectionOptions } from './connections.js';
import { cannotQuery, withDatabase } from './database.js';
import { type ApiOptions, addApiOptions, downloadFromApi } from './through-api.js';

interface ExportOptions extends ApiOptions {
  session: string;
  format: string;
  output: string;
  databaseUrl: string;
}

const FORMATS = ['raw', 'qspy', 'ndjson'] as const;

/**
 * `tracehub export --session ID --format raw -o FILE`: a stored session out of Postgres. `raw`
 * is exactly the bytes the link sent (what the gateway published; bytes it had to drop are
 * reported, not invented); `qspy` the text of its records, `ndjson` its records.
 */
export function registerExport(program: Command): void {
  const cmd = program
    .command('export')
    .description(
      "write a stored session to a file: the link's exact bytes (raw), its records' text (qspy) or records (ndjson)",
    )
    .requiredOption('--session <id>', 'session id (as printed by replay, or listed by the API)')
    .option('-f, --format <format>', FORMATS.join(' | '), 'raw')
    .option('-o, --output <file>', "file to write ('-': standard output)", '-');
  addConnectionOptions(cmd, { db: true });
  addApiOptions(cmd);
  cmd.action(async (opts: ExportOptions) => {
    if (!(FORMATS as readonly string[]).includes(opts.format))
      throw new Error(`bad --format '${opts.format}': use ${FORMATS.join(', ')}`);
    if (opts.api) {
      const out = new CommandOutput(opts.output === '-' ? process.stdout : createWriteStream(opts.output));
      const path = `/sessions/${encodeURIComponent(opts.session)}/export`;
      const res = await downloadFromApi({ ...opts, api: opts.api }, path, { format: opts.format }, out, {
        label: 'export ',
      });
      out.close();
      const lost = Number(res.headers.get('x-tracehub-lost-bytes') ?? 0);
      if (lost > 0)
        process.stderr.write(
          `warning: the gateway dropped ${lost} bytes of this session before publishing them (GET /api/v1/sessions/${opts.session}/losses lists them); the file holds what it published\n`,
        );
      return;
    }
    const { getSession, rowToTraceRecord, sessionLinkChunks, sessionLinkLosses, sessionRecords } = await import(
      '@tracehub/db'
    );
    await withDatabase(opts.databaseUrl, 'export', async (db) => {
      const session = await getSession(db, opts.session).catch((err: Error) => {
        throw cannotQuery(opts.databaseUrl, err);
      });
      if (!session) throw new Error(`no session '${opts.session}' is stored`);
      if (opts.format === 'raw' && session.link_chunks === 0) {
        throw new Error(
          `session '${session.id}' has no stored link bytes (stored before they were kept): export its records with --format qspy or ndjson, or the API's raw export rebuilt from records`,
        );
      }
      const file = opts.output === '-' ? process.stdout : createWriteStream(opts.output);
      const out = new CommandOutput(file);
      if (opts.format === 'raw') {
        const progress = ProgressBar.forBytes(Number(session.link_bytes), 'export ');
        let done = 0;
        for await (const chunk of sessionLinkChunks(db, session.id)) {
          await out.write(chunk.data);
          done += chunk.data.length;
          progress?.update(done);
          if (out.readerGone) break;
        }
        progress?.done();
        if (session.link_lost_bytes > 0n) {
          const losses = await sessionLinkLosses(db, session.id);
          process.stderr.write(
            `warning: the gateway dropped ${session.link_lost_bytes} bytes of this session before publishing them (${losses
              .slice(0, 5)
              .map((l) => `${l.lost} at offset ${l.offset}`)
              .join(', ')}${losses.length > 5 ? ', ...' : ''}); the file holds what it published\n`,
          );
        }
      } else {
        const progress = ProgressBar.forRecords(Number(session.record_count), 'export ');
        let done = 0;
        const lines = new TextLineBatch();
        for await (const row of sessionRecords(db, session.id)) {
          if (opts.format === 'ndjson') lines.add(`${JSON.stringify(rowToTraceRecord(row))}\n`, 'utf8');
          else if (row.text !== '') lines.add(`${row.text}\n`, textEncodingOf(row.protocol));
          done++;
          if (lines.length > 1 << 16) {
            await out.write(lines.take());
            progress?.update(done);
            if (out.readerGone) break;
          }
        }
        await out.write(lines.take());
        progress?.done();
      }
      out.close();
      if (file !== process.stdout) await new Promise<void>((resolve) => file.end(() => resolve()));
    });
  });
}
