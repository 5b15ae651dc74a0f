// Secrets never reach a log line: these turn the places they travel in (URLs with a password,
// request paths with a token in the query) into text fit for logs and error messages.

/** Query parameters whose values are credentials. */
const SECRET_QUERY_PARAMETERS = /([?&](?:access_token|token|password)=)[^&#]*/gi;

/** The URL without its password (`postgres://user:***@host/db`, `?password=***`), fit for a log line. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    // A password may also come as a query parameter (`?password=...`, libpq's form).
    return redactQuery(parsed.toString());
  } catch {
    return '(an unparsable URL)';
  }
}

/** A request path with the values of credential query parameters replaced (`?access_token=***`). */
export function redactQuery(path: string): string {
  return path.includes('?') ? path.replace(SECRET_QUERY_PARAMETERS, '$1***') : path;
}
