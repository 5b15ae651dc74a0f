import { type Static, type TObject, Type } from '@sinclair/typebox';
import type { DestinationStream } from 'pino';
import { ConfigError, type ConfigProblem, loadConfig } from './config.js';
import { missingFileProblems, portProblem } from './config-checks.js';
import { HealthServer } from './health-server.js';
import { createLogger, describeError, LOG_LEVELS, type Logger } from './logger.js';
import { ServiceMetrics } from './metrics.js';
import { exitIfNodeTooOld } from './node-version.js';

/** Settings every service has, read by `runService` beside the service's own. */
export const ServiceBaseConfigSchema = Type.Object({
  HEALTH_PORT: Type.Integer({
    minimum: 0,
    maximum: 65535,
    default: 0,
    description: 'a TCP port from 0 to 65535 (0: any free port)',
  }),
  HEALTH_HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'an address to listen on' }),
  LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: 'info' },
  ),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 4000 }),
});
export type ServiceBaseConfig = Static<typeof ServiceBaseConfigSchema>;

export interface ServiceContext<C> {
  name: string;
  config: C & ServiceBaseConfig;
  logger: Logger;
  metrics: ServiceMetrics;
  health: HealthServer;
  /** Aborted when the service starts shutting down. */
  signal: AbortSignal;
  /** Reports an unrecoverable error after start: one log line, a clean stop, exit code 1. */
  fail(error: unknown): void;
  /**
   * Registers something to close when the service ends: after `stop()` (within the same
   * deadline), or at once if `start` fails. The last registered is closed first, so a
   * connection opened early outlives what was built on it.
   */
  onClose(close: () => unknown): void;
}

/** What `start` returns: how to stop (finish or hand back in-flight work, then close connections). */
export interface RunningService {
  stop(): Promise<void>;
}

export interface ServiceDefinition<S extends TObject> {
  name: string;
  configSchema: S;
  /**
   * Checks of the configuration that the schema cannot express (a list in one setting, a port
   * in use, settings that go together), run before anything starts: any problem returned
   * means one log line naming the setting and exit 2, as a schema error does.
   */
  checkConfig?(config: Static<S> & ServiceBaseConfig): ConfigProblem[] | Promise<ConfigProblem[]>;
  start(ctx: ServiceContext<Static<S>>): Promise<RunningService>;
}

export interface RunOptions {
  env?: NodeJS.ProcessEnv;
  /** Ends the process (default `process.exit`); tests pass their own. */
  exit?: (code: number) => void;
  /** Listen for SIGTERM/SIGINT and uncaught errors (default true). */
  handleProcessEvents?: boolean;
  logDestination?: DestinationStream;
}

export interface ServiceHandle {
  /** Port of the health server (0 when it never opened). */
  readonly healthPort: number;
  /** Settles with the exit code once the service has stopped (or failed to start). */
  readonly exited: Promise<number>;
  /** Starts a graceful shutdown, as SIGTERM does. */
  shutdown(reason: string): Promise<number>;
}

/** Exit codes: 0 stopped cleanly, 1 failed to start / failed / stop overran, 2 bad configuration. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_CONFIG = 2;

/**
 * With this variable set to 1 a service checks its configuration (the schema, `checkConfig`,
 * files, its health port) and exits: 0 when it would start, 2 with the one line when not.
 * `npm start` checks every service this way before starting any.
 */
export const CHECK_CONFIG_ONLY_VARIABLE = 'TRACEHUB_CHECK_CONFIG_ONLY';
/**
 * Where a check-only run reports instead of exiting, when one process checks several services
 * (npm start imports every app's entry point in one process, scripts/check-config.mjs: the
 * modules they share load once). Set on globalThis under this key.
 */
export const CONFIG_CHECK_REPORT = Symbol.for('tracehub.configCheckReport');
export type ConfigCheckReport = (outcome: { service: string; code: number; message?: string }) => void;
/**
 * The pid of the process that supervises this service (`npm start`): the service stops when
 * that process is gone, so a supervisor killed outright does not leave its services running.
 */
export const SUPERVISOR_PID_VARIABLE = 'TRACEHUB_SUPERVISOR_PID';

/**
 * Runs a service: checks the Node version and loads and validates its configuration (one log
 * line and exit 2 when it is wrong, a port in use included), opens the health server on HEALTH_PORT, calls `start`, marks the service ready,
 * and on SIGTERM/SIGINT marks it not ready, calls `stop()` within SHUTDOWN_TIMEOUT_MS and
 * exits. A failing `start` (a server that cannot be reached, ...) gives one log line and exit 1.
 */
export async function runService<S extends TObject>(
  definition: ServiceDefinition<S>,
  opts: RunOptions = {},
): Promise<ServiceHandle> {
  exitIfNodeTooOld();
  const env = opts.env ?? process.env;
  const report =
    env[CHECK_CONFIG_ONLY_VARIABLE] === '1'
      ? ((globalThis as Record<symbol, unknown>)[CONFIG_CHECK_REPORT] as ConfigCheckReport | undefined)
      : undefined;
  let fatalMessage: string | undefined;
  const exit = report
    ? (code: number) => report({ service: definition.name, code, message: fatalMessage })
    : (opts.exit ?? ((code: number) => process.exit(code)));
  const handleProcessEvents = report ? false : (opts.handleProcessEvents ?? true);
  const requestedLevel = LOG_LEVELS.find((l) => l === env.LOG_LEVEL);
  // Reporting, the fatal line is the report's message rather than output.
  const destination = report
    ? {
        write(line: string) {
          const parsed = JSON.parse(line) as { level?: string; msg?: string };
          if (parsed.level === 'fatal') fatalMessage = parsed.msg;
        },
      }
    : opts.logDestination;
  const logger = createLogger(definition.name, { level: requestedLevel, destination });

  let resolveExited!: (code: number) => void;
  const exited = new Promise<number>((resolve) => {
    resolveExited = resolve;
  });
  let ended = false;
  let attached = false;
  const end = (code: number) => {
    if (ended) return;
    ended = true;
    detach();
    resolveExited(code);
    exit(code);
  };
  const failedHandle = (code: number): ServiceHandle => {
    end(code);
    return { healthPort: 0, exited, shutdown: async () => code };
  };

  const schema: TObject = Type.Composite([ServiceBaseConfigSchema, definition.configSchema]);
  let config: Static<S> & ServiceBaseConfig;
  try {
    config = loadConfig(schema, env) as Static<S> & ServiceBaseConfig;
    const problems = [...missingFileProblems(schema, config), ...((await definition.checkConfig?.(config)) ?? [])];
    if (problems.length > 0) throw new ConfigError(problems);
  } catch (error) {
    // A ConfigError names the settings to fix; its stack would only point at the loader.
    if (error instanceof ConfigError) logger.fatal(error.message);
    else logger.fatal({ err: error }, `cannot read configuration: ${describeError(error)}`);
    return failedHandle(EXIT_CONFIG);
  }

  const metrics = new ServiceMetrics(definition.name);
  const health = new HealthServer({ port: config.HEALTH_PORT, host: config.HEALTH_HOST, metrics });
  let healthPort: number;
  try {
    healthPort = await health.listen();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const problem = portProblem(
        'HEALTH_PORT',
        String(config.HEALTH_PORT),
        config.HEALTH_PORT,
        config.HEALTH_HOST,
        code,
      );
      logger.fatal(new ConfigError([problem]).message);
      return failedHandle(EXIT_CONFIG);
    }
    logger.fatal(
      { err: error },
      `cannot open the health server on port ${config.HEALTH_PORT}: ${describeError(error)}`,
    );
    return failedHandle(EXIT_FAILURE);
  }
  if (env[CHECK_CONFIG_ONLY_VARIABLE] === '1') {
    await health.close().catch(() => {});
    return failedHandle(EXIT_OK);
  }
  // The port is logged with "ready" (or the failure): a start that fails leaves exactly one line.

  const closers: Array<() => unknown> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (error) {
        logger.warn({ err: error }, `closing failed: ${describeError(error)}`);
      }
    }
  };

  const abort = new AbortController();
  let running: RunningService | undefined;
  let startDone: Promise<unknown> = Promise.resolve();
  let stopping: Promise<number> | undefined;
  let failureCode = EXIT_OK;

  const shutdown = (reason: string): Promise<number> => {
    if (stopping) return stopping;
    logger.info({ reason }, `stopping (${reason})`);
    health.setReady(false);
    abort.abort();
    stopping = (async () => {
      await startDone;
      let code = failureCode;
      if (running) {
        const deadline = config.SHUTDOWN_TIMEOUT_MS;
        let timer: NodeJS.Timeout | undefined;
        const overran = new Promise<'overran'>((resolve) => {
          timer = setTimeout(() => resolve('overran'), deadline);
        });
        try {
          const outcome = await Promise.race([running.stop().then(closeAll), overran]);
          if (outcome === 'overran') {
            logger.error(`stop did not finish within ${deadline} ms; exiting anyway`);
            code = EXIT_FAILURE;
          }
        } catch (error) {
          logger.error({ err: error }, `stop failed: ${describeError(error)}`);
          code = EXIT_FAILURE;
        } finally {
          clearTimeout(timer);
        }
      }
      // A start that was still running when the shutdown came may have opened things too.
      await closeAll();
      await health.close().catch(() => {});
      if (code === EXIT_OK) logger.info('stopped');
      end(code);
      return code;
    })();
    return stopping;
  };

  const fail = (error: unknown) => {
    if (stopping) return;
    logger.fatal({ err: error }, describeError(error));
    failureCode = EXIT_FAILURE;
    void shutdown('failure');
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      end(EXIT_FAILURE);
      return;
    }
    void shutdown(signal);
  };
  const onUncaught = (error: unknown) => {
    logger.fatal({ err: error }, `unexpected error: ${describeError(error)}`);
    failureCode = EXIT_FAILURE;
    if (stopping) end(EXIT_FAILURE);
    else void shutdown('unexpected error');
  };
  function detach() {
    if (!attached) return;
    attached = false;
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  }
  if (handleProcessEvents) {
    attached = true;
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
  }

  const context: ServiceContext<Static<S>> = {
    name: definition.name,
    config,
    logger,
    metrics,
    health,
    signal: abort.signal,
    fail,
    onClose: (close) => {
      closers.push(close);
    },
  };
  const started = definition.start(context);
  startDone = started.catch(() => {});
  try {
    running = await started;
  } catch (error) {
    if (!stopping) {
      // A setting found wrong only while starting (a port taken since the check) is still a setting.
      const code = error instanceof ConfigError ? EXIT_CONFIG : EXIT_FAILURE;
      if (error instanceof ConfigError) logger.fatal({ healthPort }, error.message);
      else logger.fatal({ err: error, healthPort }, `cannot start: ${describeError(error)}`);
      failureCode = code;
      await closeAll();
      await health.close().catch(() => {});
      end(code);
      return { healthPort, exited, shutdown: async () => code };
    }
  }
  const supervisorPid = Number(env[SUPERVISOR_PID_VARIABLE]);
  if (handleProcessEvents && Number.isInteger(supervisorPid) && supervisorPid > 0) {
    // Orphaned, a process is handed to init (or a subreaper): its parent pid changes.
    const watch = setInterval(() => {
      if (process.ppid === supervisorPid) return;
      clearInterval(watch);
      void shutdown('supervisor gone');
    }, 500);
    watch.unref();
    closers.unshift(() => clearInterval(watch));
  }
  if (!stopping) {
    health.setReady(true);
    logger.info({ healthPort }, `ready; health on port ${healthPort} (/healthz, /readyz, /metrics)`);
  }
  return { healthPort, exited, shutdown };
}
