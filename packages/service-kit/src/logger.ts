import pino, { type DestinationStream, type LevelWithSilent, type Logger } from 'pino';

export type { Logger } from 'pino';

export const LOG_LEVELS: readonly LevelWithSilent[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface LoggerOptions {
  level?: LevelWithSilent;
  /** Where lines go (default: stdout, written synchronously so the last line before exit is kept). */
  destination?: DestinationStream;
}

/** A JSON-lines logger whose every line carries `service: name`. */
export function createLogger(name: string, opts: LoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      base: { service: name, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/**
 * One line for an error: its message, with the messages of what it wraps. Node reports a
 * refused connection to a host with several addresses as an AggregateError with an empty
 * message, so the inner errors are read too. Log it as the message with the error itself
 * beside it, `log.error({ err }, describeError(err))`: the line says what happened, and pino
 * keeps the stack under `err`.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let text = error.message;
  if (error instanceof AggregateError && error.errors.length > 0) {
    const inner = [...new Set(error.errors.map(describeError))].join(', ');
    text = text ? `${text} (${inner})` : inner;
  }
  const cause = (error as { cause?: unknown }).cause;
  if (cause !== undefined && cause !== error) {
    const causeText = describeError(cause);
    if (causeText && !text.includes(causeText)) text = text ? `${text}: ${causeText}` : causeText;
  }
  if (!text) text = (error as { code?: string }).code ?? error.name;
  return text;
}
