import { hostname, userInfo } from 'node:os';
import type { LinkSettingsPutReply, LinkSettingsReply, Session } from '@tracehub/api-contract';
import { redactUrl } from '@tracehub/contracts';
import type { Command } from 'commander';
import type { CommandOutput } from '../command-io.js';
import { ProgressBar, type ProgressOutput } from '../progress-bar.js';

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
    // fetch's own message may quote the URL whole, credentials and all.
    const password = passwordOf(opts.api);
    const why = String((error as Error).cause ?? (error as Error).message);
    throw new Error(
      `cannot reach the API at ${redactUrl(opts.api)} (${password ? why.replaceAll(password, '***') : why}): check --api (or TRACEHUB_API)`,
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

/**
 * Streams `GET /api/v1<path>?<query>` to `out`; with `progress`, the progress bar the
 * direct-Postgres path draws, from the totals the API sends in its headers (link bytes of a
 * raw export, records otherwise: a record a line).
 */
export async function downloadFromApi(
  opts: ApiOptions & { api: string },
  path: string,
  query: Record<string, string>,
  out: CommandOutput,
  progress?: { label: string; out?: ProgressOutput },
): Promise<Response> {
  const res = await askApi(opts, path, { query });
  if (!res.body) return res;
  const linkBytes = Number(res.headers.get('x-tracehub-link-bytes') ?? Number.NaN);
  const records = Number(res.headers.get('x-tracehub-records') ?? Number.NaN);
  const byBytes = Number.isFinite(linkBytes);
  let bar: ProgressBar | undefined;
  if (progress) {
    if (byBytes) bar = ProgressBar.forBytes(linkBytes, progress.label, progress.out);
    else if (Number.isFinite(records)) bar = ProgressBar.forRecords(records, progress.label, progress.out);
  }
  let done = 0;
  for await (const chunk of res.body) {
    const bytes = chunk as Uint8Array;
    await out.write(bytes);
    if (bar) {
      done += byBytes ? bytes.length : linesIn(bytes);
      bar.update(done);
    }
    if (out.readerGone) break;
  }
  bar?.done();
  return res;
}

function linesIn(bytes: Uint8Array): number {
  let lines = 0;
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) lines++;
  return lines;
}

/** The JSON answer of `method /api/v1<path>` (with a JSON body). */
export async function apiJson<T>(
  opts: ApiOptions & { api: string },
  path: string,
  init: { method?: string; body?: unknown; query?: Record<string, string> } = {},
): Promise<T> {
  return (await (await askApi(opts, path, init)).json()) as T;
}

/** A link the API knows by rig and name, or undefined. */
export async function linkThroughApi(
  opts: ApiOptions & { api: string },
  rig: string,
  name: string,
): Promise<{ id: number; rig: string; name: string; protocol: string } | undefined> {
  const { links } = await apiJson<{ links: Array<{ id: number; rig: string; name: string; protocol: string }> }>(
    opts,
    '/links',
    { query: { rig } },
  );
  return links.find((l) => l.name === name);
}

/** A link's settings document and its history (`GET /links/{id}/settings`). */
export async function linkSettingsThroughApi(
  opts: ApiOptions & { api: string },
  linkId: number,
): Promise<LinkSettingsReply> {
  return apiJson<LinkSettingsReply>(opts, `/links/${linkId}/settings`);
}

/** A stored session (`GET /sessions/{id}`), or undefined when the API has none of that id. */
export async function sessionThroughApi(opts: ApiOptions & { api: string }, id: string): Promise<Session | undefined> {
  try {
    return await apiJson<Session>(opts, `/sessions/${encodeURIComponent(id)}`);
  } catch (error) {
    if (/answered 404/.test((error as Error).message)) return undefined;
    throw error;
  }
}

/** A link's latest session (`GET /sessions?rig&link&limit=1`, newest first), or undefined. */
export async function latestSessionThroughApi(
  opts: ApiOptions & { api: string },
  rig: string,
  link: string,
): Promise<Session | undefined> {
  const { sessions } = await apiJson<{ sessions: Session[] }>(opts, '/sessions', {
    query: { rig, link, limit: '1' },
  });
  return sessions[0];
}

/**
 * `PUT /links/{id}/settings` (a control token): the API keeps the change with the token's
 * fingerprint, after the user and host as the direct-Postgres path names them.
 */
export async function putSettingsThroughApi(
  opts: ApiOptions & { api: string },
  linkId: number,
  settings: Record<string, unknown>,
  apply: 'now' | 'next-session',
): Promise<LinkSettingsPutReply> {
  return apiJson<LinkSettingsPutReply>(opts, `/links/${linkId}/settings`, {
    method: 'PUT',
    body: { settings, apply, via: 'cli', by: `${userInfo().username}@${hostname()}` },
  });
}

/** The password a URL carries (`https://user:pass@host`), as it appears in text quoting the URL. */
function passwordOf(url: string): string {
  try {
    return new URL(url).password;
  } catch {
    return '';
  }
}
