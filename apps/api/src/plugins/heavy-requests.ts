import type { onRequestHookHandler } from 'fastify';
import { sendProblem } from './problems.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route may scan many records (a records page, an export, a timeline, a sequence
     * diagram): only so many run at once, so a burst of them cannot take every database
     * connection and core from the rest of the api.
     */
    heavy?: boolean;
  }
}

/**
 * Admits at most `limit` heavy requests at a time and answers the others at once with a 503
 * and `Retry-After`, rather than queueing them behind work that may take seconds. A request
 * holds its place until its response has been sent or its client went away (a streamed
 * export holds it for as long as it streams).
 */
export function limitHeavyRequests(limit: number): onRequestHookHandler {
  let running = 0;
  return function admit(request, reply, done) {
    if (request.routeOptions.config?.heavy !== true) {
      done();
      return;
    }
    if (running >= limit) {
      sendProblem(
        reply.header('retry-after', '2'),
        503,
        `the server is already running ${limit} heavy requests (record queries, exports, timelines); try again in a few seconds, or narrow the query`,
      );
      return;
    }
    running += 1;
    reply.raw.once('close', () => {
      running -= 1;
    });
    done();
  };
}
