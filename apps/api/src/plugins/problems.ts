import type { Socket } from 'node:net';
import { httpErrors } from '@fastify/sensible';
import type { Problem } from '@tracehub/contracts';
import { postgresFailureOf, ScanLimitError } from '@tracehub/db';
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { isNumeric, numericRange } from './request-validation.js';

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  414: 'URI Too Long',
  422: 'Unprocessable Content',
  426: 'Upgrade Required',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export function sendProblem(reply: FastifyReply, status: number, detail: string): FastifyReply {
  const problem: Problem = {
    type: 'about:blank',
    title: TITLES[status] ?? 'Error',
    status,
    detail,
    instance: reply.request.url.split('?')[0],
  };
  return reply.code(status).type('application/problem+json').send(problem);
}

/**
 * Every error becomes `application/problem+json`. Validation errors and the framework's own
 * 4xx (bad JSON, too large, wrong media type) keep their status and say what was wrong;
 * anything else is a 500 whose detail reveals nothing (it is logged instead).
 */
const replyProblems: FastifyPluginAsync<{ statementTimeoutMs: number }> = async (app, limits) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      return sendProblem(reply, 400, describeValidation(error.validationContext ?? 'request', error.validation));
    }
    const failure = postgresFailureOf(error);
    if (failure === 'statement-timeout') {
      request.log.warn({ err: error }, 'a statement ran past the statement timeout');
      return sendProblem(
        reply,
        503,
        `the query ran longer than the ${limits.statementTimeoutMs} ms this server allows and was stopped: narrow the time range or add a rig, link or session filter`,
      );
    }
    if (error instanceof ScanLimitError) {
      request.log.info({ scannedBytes: error.scannedBytes }, 'a records query was too broad');
      return sendProblem(reply, 422, error.message);
    }
    if (failure === 'unavailable') {
      request.log.warn({ err: error }, 'database unavailable');
      return sendProblem(
        reply.header('retry-after', '5'),
        503,
        'the database is unavailable right now; the request was not served: try again in a few seconds',
      );
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500)
      return sendProblem(reply, status, describeClientError(error, request.headers['content-type']));
    // A 5xx a route chose (httpErrors.badGateway, ...) says why; any other is not shown.
    if (status >= 500 && error instanceof httpErrors.HttpError) return sendProblem(reply, status, error.message);
    request.log.error({ err: error }, 'request failed');
    return sendProblem(reply, 500, 'internal error: the request could not be completed (see the server log)');
  });
  const routes = new RouteMethods();
  app.addHook('onRoute', (route) => routes.add(route.method, route.url));
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const allowed = routes.methodsOf(path);
    // A pattern that takes this method matched and still no route did (a wildcard's own
    // refusal): the path is what is wrong, not the method.
    if (allowed.length > 0 && !allowed.includes(request.method))
      return sendProblem(
        reply.header('allow', allowed.join(', ')),
        405,
        `${path} does not take ${request.method}: it takes ${allowed.join(', ')}`,
      );
    return sendProblem(reply, 404, `no route ${request.method} ${path}`);
  });
};

/** The methods of each route's path pattern, to tell a wrong method (405) from a wrong path (404). */
class RouteMethods {
  private readonly patterns = new Map<string, { path: RegExp; methods: Set<string> }>();

  add(method: string | string[], url: string): void {
    let entry = this.patterns.get(url);
    if (!entry) {
      // `:name` is one path part, `*` the rest of the path.
      const source = url
        .split('/')
        .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace('*', '.*')))
        .join('/');
      entry = { path: new RegExp(`^${source}$`), methods: new Set() };
      this.patterns.set(url, entry);
    }
    for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m);
  }

  methodsOf(path: string): string[] {
    const methods = new Set<string>();
    for (const { path: pattern, methods: of } of this.patterns.values())
      if (pattern.test(path)) for (const m of of) methods.add(m);
    return [...methods].sort();
  }
}

/** The longest part of a URL path the router takes (ids and names are far shorter). */
export const MAX_PATH_PART = 200;

/**
 * The framework's own refusals before a route is found (a path whose percent-encoding does
 * not decode, a path parameter longer than the router takes), as problems: Fastify's
 * `frameworkErrors` option.
 */
export function frameworkProblem(error: FastifyError, reply: FastifyReply): FastifyReply {
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 400;
  const detail =
    error.code === 'FST_ERR_BAD_URL'
      ? "the URL's path does not decode (a % not followed by two hex digits that make UTF-8): encode the path's parts with encodeURIComponent"
      : status === 414
        ? `a part of the URL path is longer than this server takes (${MAX_PATH_PART} characters): ids and names are shorter`
        : `the request was refused before it reached a route: ${error.message}`;
  return sendProblem(reply, status, detail);
}

/**
 * What the HTTP parser refuses before any route or hook runs (a request head larger than
 * Node takes, a request slower than its timeout, a malformed request line), answered as a problem on the socket itself: Fastify's
 * `clientErrorHandler` option.
 */
export function clientErrorProblem(error: Error & { code?: string }, socket: Socket): void {
  // A reset or half-closed socket takes no answer: let it go rather than keep it open.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const problem: Problem = { type: 'about:blank', ...clientErrorOf(error) };
  const body = JSON.stringify(problem);
  socket.end(
    `HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** The status and words for what the HTTP parser refused: a head too large, a client too slow, else unparsable. */
function clientErrorOf(error: Error & { code?: string }): { title: string; status: number; detail: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return {
      title: 'Request Header Fields Too Large',
      status: 431,
      detail:
        'the request line and headers are larger than this server takes (16 KiB): a query string that long is a mistake; send a narrower query',
    };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return {
      title: 'Request Timeout',
      status: 408,
      detail: 'the request was not received in full within the time this server waits for one',
    };
  return {
    title: 'Bad Request',
    status: 400,
    detail: `the request could not be parsed as HTTP (${error.code ?? error.message})`,
  };
}

/** Every error answered as a problem (see above), for the whole app: register it first. */
export const problemReplies = fp(replyProblems, { name: 'problem-replies', fastify: '5.x' });

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
  /** The schema of the field (Ajv's `verbose` option). */
  parentSchema?: unknown;
}

/** Ajv's keywords that a number outside a numeric field's range (or not a number) fails. */
const NUMERIC_KEYWORDS = new Set(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);

/**
 * Schema errors as one sentence per field, naming the field and what it allows: a union of
 * literals says its values (not "must be equal to constant" once per value), a pattern says
 * what it means where we know it.
 */
function describeValidation(where: string, issues: readonly ValidationIssue[]): string {
  const byField = new Map<string, ValidationIssue[]>();
  for (const v of issues) {
    const path = v.instancePath ? v.instancePath.slice(1).replaceAll('/', '.') : '';
    const field = path || (v.params.missingProperty as string | undefined) || '';
    byField.set(field, [...(byField.get(field) ?? []), v]);
  }
  return [...byField]
    .map(([field, list]) => {
      const allowed = list.filter((v) => v.keyword === 'const').map((v) => String(v.params.allowedValue));
      const message =
        allowed.length > 0
          ? `must be one of ${allowed.join(', ')}`
          : (list.map(describeIssue).find((m) => m !== undefined) ?? 'is invalid');
      return field ? `${where} ${field}: ${message}` : `${where}: ${message}`;
    })
    .join('; ');
}

function describeIssue(v: ValidationIssue): string | undefined {
  if (v.keyword === 'anyOf' || v.keyword === 'oneOf') return undefined;
  const field = v.parentSchema as Parameters<typeof numericRange>[0] | undefined;
  if (NUMERIC_KEYWORDS.has(v.keyword) && field && isNumeric(field)) return `must be ${numericRange(field)}`;
  if (v.keyword === 'type' && v.params.type === 'object') return 'must be a JSON object';
  if (v.keyword === 'additionalProperties')
    return `takes no field ${JSON.stringify(v.params.additionalProperty)}${fieldsOf(field)}`;
  if (v.keyword === 'pattern' && String(v.params.pattern).includes('u0000')) return 'must not contain a NUL byte';
  // A pattern whose field says what it takes as a noun phrase ("an integer link id ...") says that, not the regex.
  const described = (field as { description?: unknown } | undefined)?.description;
  if (v.keyword === 'pattern' && typeof described === 'string' && /^an? /.test(described))
    return `must be ${described}`;
  if (v.keyword === 'format' && v.params.format === 'date-time')
    return 'must be a date-time, an RFC 3339 instant such as 2026-01-01T12:00:00Z';
  return v.message;
}

/** ` (its fields: a, b)` of an object schema, or ` (it has no fields)`. */
function fieldsOf(schema: unknown): string {
  const names = Object.keys((schema as { properties?: object } | undefined)?.properties ?? {});
  return names.length > 0 ? ` (its fields: ${names.join(', ')})` : ' (it has no fields)';
}

/** The framework's own 4xx messages, said in words that tell the caller what to change. */
function describeClientError(error: FastifyError, contentType: string | undefined): string {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `unsupported content-type ${JSON.stringify(contentType ?? '')}: send application/json`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return `request body is too large: ${error.message}`;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'request body is empty: send a JSON object';
    default:
      return /JSON/.test(error.name) || error instanceof SyntaxError
        ? `request body is not valid JSON: ${error.message}`
        : error.message;
  }
}
