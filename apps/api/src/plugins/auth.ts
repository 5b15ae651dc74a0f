import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Scope } from '../config.js';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Scope a token needs for the route (default `read`). */
    scope?: Scope;
  }
}

const digest = (token: string) => createHash('sha256').update(token).digest();

/**
 * Bearer-token check for every route it is added to: 401 without a known token, 403 when the
 * token lacks the route's scope. Browsers cannot put headers on EventSource or WebSocket
 * requests, so `access_token` in the query string is accepted as well.
 */
export function bearerAuth(tokens: ReadonlyMap<string, ReadonlySet<Scope>>): onRequestHookHandler {
  // Compare digests in constant time, so response timing tells nothing about a token's prefix.
  const known = [...tokens].map(([token, scopes]) => ({ hash: digest(token), scopes }));
  return function authenticate(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
    const needed: Scope = request.routeOptions.config?.scope ?? 'read';
    const token = presentedToken(request);
    if (token === undefined) {
      sendProblem(
        reply.header('www-authenticate', 'Bearer realm="tracehub"'),
        401,
        known.length === 0
          ? 'no API tokens are configured on this server (set API_TOKENS)'
          : "missing bearer token: send 'Authorization: Bearer <token>'",
      );
      return;
    }
    const hash = digest(token);
    const match = known.find((k) => timingSafeEqual(k.hash, hash));
    if (!match) {
      sendProblem(reply.header('www-authenticate', 'Bearer error="invalid_token"'), 401, 'unknown bearer token');
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
    done();
  };
}

function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return m ? m[1] : undefined;
  }
  const q = request.query as Record<string, unknown> | undefined;
  const fromQuery = q?.access_token;
  return typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined;
}
