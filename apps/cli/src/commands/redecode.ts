import type { RedecodeResult } from '@tracehub/api-contract';
import { redactUrl } from '@tracehub/contracts';
import type { Command } from 'commander';
import { ProgressBar } from '../progress-bar.js';
import { tierUpLater } from '../v8-tiering.js';
import { addConnectionOptions } from './connections.js';
import { withDatabase } from './database.js';
import { type ApiOptions, addApiOptions, apiJson } from './through-api.js';

interface RedecodeCliOptions extends ApiOptions {
  session: string;
  databaseUrl: string;
}

/**
 * `tracehub redecode --session ID`: decodes a stored session's link bytes again with the link's
 * current settings and this build's decoder, and replaces its records in one transaction (the
 * same as `POST /api/v1/sessions/{id}/redecode`). Progress on stderr; a summary line on stdout.
 */
export function registerRedecode(program: Command): void {
  const cmd = program
    .command('redecode')
    .description(
      "decode a stored session's link bytes again with the link's current settings, replacing its records (after a settings fix or a decoder upgrade)",
    )
    .requiredOption('--session <id>', 'session id (as printed by replay, or listed by the API)');
  addConnectionOptions(cmd, { db: true });
  addApiOptions(cmd);
  cmd.action(async (opts: RedecodeCliOptions) => {
    if (opts.api) {
      // The API decodes in one request and says nothing until done: a bar of the session's
      // link bytes would be made up, so the terminal gets a line that counts the seconds.
      const waiting = ProgressBar.waiting(`redecode session ${opts.session} on the API server`);
      try {
        const result = await apiJson<RedecodeResult>(
          { ...opts, api: opts.api },
          `/sessions/${encodeURIComponent(opts.session)}/redecode`,
          { method: 'POST', body: {} },
        );
        waiting?.done();
        report(result);
      } finally {
        waiting?.stop();
      }
      return;
    }
    const { redecodeSession } = await import('@tracehub/decoders');
    // Decoding in this process, as `decode` does: the same V8 tier-up, once the modules are loaded.
    tierUpLater();
    let progress: ProgressBar | undefined;
    await withDatabase(opts.databaseUrl, 'redecode', async (db) => {
      const result = await redecodeSession(db, opts.session, {
        onProgress: (done, total) => {
          progress ??= ProgressBar.forBytes(total, 'redecode ');
          progress?.update(done);
        },
      }).catch((err: Error & { code?: string }) => {
        if (err.name === 'RedecodeError') throw err;
        throw new Error(
          `cannot re-decode through Postgres at ${redactUrl(opts.databaseUrl)}: ${err.message}; check DATABASE_URL`,
        );
      });
      progress?.done();
      report(result);
    });
  });
}

function report(result: RedecodeResult): void {
  if (result.settingsRefused !== undefined)
    process.stderr.write(
      `the link's settings were refused (${result.settingsRefused}): decoded with the defaults, as the decoder service does\n`,
    );
  process.stdout.write(summaryLine(result));
}

/** What a re-decode did (the reply of `POST /sessions/{id}/redecode`), as the one line it prints. */
function summaryLine(result: RedecodeResult): string {
  return (
    `session ${result.session}: ${result.records} records (was ${result.previousRecords}), ${result.errors} errors, ` +
    `${result.gaps} gaps from ${result.bytes} link bytes in ${result.chunks} chunks, ${Math.round(result.ms)} ms; ` +
    `settings ${JSON.stringify(result.settings)}\n`
  );
}
