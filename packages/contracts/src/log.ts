/**
 * What a module logs through: the fields first (an error as `{ err }`, so its stack is kept),
 * then a one-line message. pino's `Logger` (service-kit's `createLogger`, Fastify's `app.log`)
 * is one; modules take a `Log` so that they, and their tests, need no pino.
 */
export interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** The log of a module given none: says nothing. */
export const silentLog: Log = Object.freeze({ info() {}, warn() {}, error() {} });
