/** Talking to the api: the bearer token lives in localStorage (set it once in the header). */
import { readableProblem } from './problem.js';

const TOKEN_KEY = 'tracehub.token';

export function token(): string {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(value: string): void {
  localStorage.setItem(TOKEN_KEY, value.trim());
}

/** A refused or failed request; `message` is one readable sentence, `detail` the api's own. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

async function request<T>(path: string, init: RequestInit): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${token()}` };
  if (init.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`/api/v1${path}`, { ...init, headers });
  if (!res.ok) {
    let detail: string | undefined;
    try {
      detail = (await res.json()).detail;
    } catch {}
    throw new ApiError(res.status, readableProblem(res.status, detail), detail);
  }
  // 204 No Content (a DELETE): nothing to read.
  return (res.status === 204 ? undefined : await res.json()) as T;
}

export function getJson<T>(path: string, signal?: AbortSignal): Promise<T> {
  return request<T>(path, { signal });
}

/** A POST with a JSON body (or none). */
export function postJson<T>(path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  return request<T>(path, { method: 'POST', signal, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

/** A DELETE (204 on success). */
export function deleteResource(path: string, signal?: AbortSignal): Promise<void> {
  return request<void>(path, { method: 'DELETE', signal });
}

/** URL of a streamed endpoint (SSE, export): browsers cannot set headers there, so the token goes in the query. */
export function streamUrl(path: string, query: URLSearchParams): string {
  const q = new URLSearchParams(query);
  q.set('access_token', token());
  return `/api/v1${path}?${q}`;
}

/** The replies the pages show, typed by the api's own schemas. */
export type { LinkSummary, Session } from '@tracehub/api-contract';
