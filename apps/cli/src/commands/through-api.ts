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
 * `method /api/v1<path>?<query>` on the API of `opts`, with its token. A refusal is one
 * sentence naming the API's answer and what to do (a missing or unknown token, a session or
 * link that is not there).
 */
async function askApi(
  opts: ApiOptions & { api: string },
  path: string,
  init: { query?: Record<string, string>; method?: string; body?: unknown } = {},
): Promise<Response> {
  const query = init.query ? `?${new URLSearchParams(init.query)}` : '';
  const url = `${opts.api.replace(/\/+$/, '')}/api/v1${path}${query}`;
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? 'GET',
      headers,
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  } catch (error) {
    throw new Error(
      `cannot reach the API at ${opts.api} (${(error as Error).cause ?? (error as Error).message}): check --api (or TRACEHUB_API)`,
    );
  }
  if (res.ok) return res;
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

/** Streams `GET /api/v1<path>?<query>` to `out`. */
export async function downloadFromApi(
  opts: ApiOptions & { api: string },
  path: string,
  query: Record<string, string>,
  out: CommandOutput,
): Promise<void> {
  const res = await askApi(opts, path, { query });
  if (!res.body) return;
  for await (const chunk of res.body) {
    await out.write(chunk as Uint8Array);
    if (out.readerGone) break;
  }
}

/** The JSON answer of `method /api/v1<path>` (with a JSON body). */
export async function apiJson<T>(
  opts: ApiOptions & { api: string },
  path: string,
  init: { method?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<T> {
  return (await (await askApi(opts, path, init)).json()) as T;
}
