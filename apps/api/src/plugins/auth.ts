import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Scope } from '../config.js';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scope a token needs for the route (default `read`). */
    scope?: Scope;
    /**
     * A browser opens this route itself (EventSource, WebSocket, a download link) and cannot
     * send a header there, so `access_token` in the query string is accepted, for read only.
     */
    queryToken?: boolean;
  }
  interface FastifyRequest {
    /** What the request's token may do (set by the auth hook; unset, nothing beyond the route's own scope is shown). */
    scopes?: ReadonlySet<Scope>;
  }
}

const READ_ONLY: ReadonlySet<Scope> = new Set(['read']);
const EVERY_SCOPE: ReadonlySet<Scope> = new Set(['read', 'control']);

/** True when the request's token has `scope` (a route showing more to control scope than to read asks). */
export const hasScope = (request: FastifyRequest, scope: Scope): boolean => request.scopes?.has(scope) ?? false;

/** With `API_AUTH=none`: every request may do everything. */
export function grantEveryScope(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  request.scopes = EVERY_SCOPE;
  done();
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Bearer-token check for every route it is added to: 401 without a known token, 403 when the
 * token lacks the route's scope. A token in the query string ends up in browser histories,
 * proxy logs and Referer headers, so it is taken only on the routes a browser opens itself
 * (`queryToken`), and there it grants read scope only, whatever the token could do.
 */
export function bearerAuth(tokens: ReadonlyMap<string, ReadonlySet<Scope>>): onRequestHookHandler {
  // Compare digests in constant time, so response timing tells nothing about a token's prefix.
  const known = [...tokens].map(([token, scopes]) => ({ hash: digest(token), scopes }));
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
    const config = request.routeOptions.config;
    const needed: Scope = config?.scope ?? 'read';
    const presented = presentedToken(request);
    if (presented?.via === 'query' && config?.queryToken !== true) {
      sendProblem(
        reply.header('www-authenticate', 'Bearer realm="tracehub"'),
        401,
        "a token in the query string is accepted only on live streams and export downloads: send 'Authorization: Bearer <token>'",
      );
      return;
    }
    if (presented === undefined) {
      sendProblem(
        reply.header('www-authenticate', 'Bearer realm="tracehub"'),
        401,
        known.length === 0
          ? 'no API tokens are configured on this server (set API_TOKENS)'
          : "missing bearer token: send 'Authorization: Bearer <token>'",
      );
      return;
    }
    const hash = digest(presented.token);
    const match = known.find((k) => timingSafeEqual(k.hash, hash));
    if (!match) {
      sendProblem(reply.header('www-authenticate', 'Bearer error="invalid_token"'), 401, 'unknown bearer token');
      return;
    }
    if (presented.via === 'query' && needed !== 'read') {
      sendProblem(
        reply,
        403,
        `a token in the query string grants read scope only; send it in the Authorization header`,
      );
      return;
    }
    if (!match.scopes.has(needed)) {
      sendProblem(
        reply,
        403,
        `this token lacks the '${needed}' scope that ${request.method} ${request.routeOptions.url} needs`,
      );
      return;
    }
    request.scopes = presented.via === 'query' ? READ_ONLY : match.scopes;
    done();
  };
}

function presentedToken(request: FastifyRequest): { token: string; via: 'header' | 'query' } | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m?.[1] ? { token: m[1], via: 'header' } : undefined;
  }
  const q = request.query as Record<string, unknown> | undefined;
  const fromQuery = q?.access_token;
  return typeof fromQuery === 'string' && fromQuery !== '' ? { token: fromQuery, via: 'query' } : undefined;
}
