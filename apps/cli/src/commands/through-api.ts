import type { Command } from 'commander';
import type { CommandOutput } from '../command-io.js';

/** Where a command reads through the tracehub API instead of Postgres (a laptop with a token). */
export interface ApiOptions {
  api?: string;
  token?: string;
}

/** `--api URL` and `--token T` (env TRACEHUB_API, TRACEHUB_TOKEN): the command asks the API, not Postgres. */
export function addApiOptions(cmd: Command): Command {
  return cmd
    .option(
      '--api <url>',
      'read through the tracehub API at this URL (the dashboard address) instead of Postgres (env TRACEHUB_API)',
      process.env.TRACEHUB_API || undefined,
    )
    .option(
      '--token <token>',
      'API token, as pasted in the dashboard (env TRACEHUB_TOKEN)',
      process.env.TRACEHUB_TOKEN || undefined,
    );
}

/**
 * Streams `GET /api/v1<path>?<query>` to `out`. A refusal is one sentence naming the API's
 * answer and what to do (a missing or unknown token, a session that is not there).
 */
export async function downloadFromApi(
  opts: ApiOptions & { api: string },
  path: string,
  query: Record<string, string>,
  out: CommandOutput,
): Promise<void> {
  const url = `${opts.api.replace(/\/+$/, '')}/api/v1${path}?${new URLSearchParams(query)}`;
  let res: Response;
  try {
    res = await fetch(url, { headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} });
  } catch (error) {
    throw new Error(
      `cannot reach the API at ${opts.api} (${(error as Error).cause ?? (error as Error).message}): check --api (or TRACEHUB_API)`,
    );
  }
  if (!res.ok) {
    const detail = await res
      .json()
      .then((p) => (p as { detail?: string }).detail)
      .catch(() => undefined);
    const what =
      res.status === 401
        ? ': give a token with --token (or TRACEHUB_TOKEN), one of those the dashboard takes'
        : res.status === 403
          ? ': this token may not do that; ask for one with more scopes'
          : '';
    throw new Error(`the API answered ${res.status}${detail ? ` (${detail})` : ''}${what}`);
  }
  if (!res.body) return;
  for await (const chunk of res.body) {
    await out.write(chunk as Uint8Array);
    if (out.readerGone) break;
  }
}
