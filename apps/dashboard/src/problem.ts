/**
 * API problems (RFC 9457) as one sentence a person can act on: which field, what is allowed.
 * The api's `detail` may already be such a sentence; the raw validator phrasing
 * (`querystring kind.0: must be equal to constant`) is turned into one here.
 */

import { EXPORT_FORMATS } from '@tracehub/contracts/export-formats';
import { PROTOCOLS } from '@tracehub/contracts/names';

/** Values the api accepts for enumerated parameters, named the way the api names them. */
const ALLOWED: Record<string, readonly string[]> = {
  kind: ['record', 'dict', 'info', 'marker', 'error'],
  protocol: PROTOCOLS,
  order: ['asc', 'desc'],
  format: EXPORT_FORMATS,
};

const LABELS: Record<string, string> = {
  from: 'The start time',
  to: 'The end time',
  rig: 'The rig',
  link: 'The link',
  obj: 'The QS object',
  sig: 'The QS signal',
  master: 'The STP master',
  channel: 'The STP channel',
  limit: 'The page size',
  cursor: 'The page cursor',
};

function rephrase(where: string, message: string): string {
  if (/must be equal to (constant|one of the allowed values)/.test(message)) {
    const allowed = ALLOWED[where];
    return allowed ? `must be one of ${allowed.join(', ')}` : 'has a value that is not allowed';
  }
  if (/must match format "date-time"/.test(message)) return 'must be a date and time like 2025-11-24T16:00:00Z';
  if (/must match pattern/.test(message)) return "must be a name of letters, digits, '.', '-' or '_'";
  if (message === 'must be integer') return 'must be a whole number';
  return message;
}

/** One readable sentence from a problem's detail (and its status when the detail says nothing). */
export function readableProblem(status: number, detail: string | undefined): string {
  // The api asks for a token in its own words (an HTTP header); here it is the box at the top.
  if (status === 401 && detail && /^missing bearer token/.test(detail))
    return 'This needs an API token: paste yours into the "API token" box at the top right and press Enter.';
  if (status === 401 && detail === 'unknown bearer token')
    return 'The server does not know the API token in the box at the top right: paste a valid one and press Enter.';
  if (!detail)
    return `The server answered ${status}${status === 401 ? ': paste a valid API token in the header' : ''}.`;
  const sentences = new Set<string>();
  for (const part of detail.split('; ')) {
    const m = /^(querystring|params|body|headers) ([\w.[\]]+): (.*)$/.exec(part);
    if (!m) {
      sentences.add(part.charAt(0).toUpperCase() + part.slice(1).replace(/\.?$/, '.'));
      continue;
    }
    const field = m[2].split('.')[0];
    // The validator's summary of an alternative already named above says nothing more.
    if (
      /must match a schema in anyOf/.test(m[3]) &&
      [...sentences].some((t) => t.includes(`The ${field} `) || t.startsWith(LABELS[field] ?? '\0'))
    )
      continue;
    const label = LABELS[field] ?? `The ${field} parameter`;
    sentences.add(`${label} ${rephrase(field, m[3])}.`);
  }
  return [...sentences].join(' ');
}
