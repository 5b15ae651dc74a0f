// An API process of the tests that run several (as behind a load balancer): started from the
// build on the test's database and bus, with one read+control token, and called over HTTP.
import { type RunningProcess, removeBusPrefix } from '../foundation/processes.js';
import { type PipelineEnv, requireBuild, startService, stopAll } from '../pipeline/harness.js';
import { freePort, natsUrl } from './index.js';
import { type TestBackends, testBackends } from './test-backends.js';

/** A test's database and bus (with its topology) for the processes it starts, and those processes. */
export interface ProcessBackends {
  backends: TestBackends;
  env: PipelineEnv;
  /** The processes started: `close()` stops them first. */
  procs: RunningProcess[];
  close(): Promise<void>;
}

/** Checks the build, then makes `testBackends(label)` with topology and the environment services take. */
export async function processBackends(label: string): Promise<ProcessBackends> {
  requireBuild();
  const backends = await testBackends(label, { topology: true });
  const env = { natsUrl: natsUrl(), databaseUrl: backends.fresh.url, prefix: backends.bus.names.prefix };
  const procs: RunningProcess[] = [];
  const close = async () => {
    await stopAll(procs);
    await backends.close();
    await removeBusPrefix(env.natsUrl, env.prefix);
  };
  return { backends, env, procs, close };
}

export interface ApiProcess {
  proc: RunningProcess;
  port: number;
  /** `method path` under `/api/v1` with the token; resolves with the status and the parsed body. */
  call(method: string, path: string, body?: object): ReturnType<typeof callApi>;
}

/** Starts `apps/api` with `API_TOKENS=<token>:read+control` and `extra` on a free port. */
export async function startApiProcess(
  env: PipelineEnv,
  token: string,
  extra: Record<string, string> = {},
): Promise<ApiProcess> {
  const port = await freePort();
  const proc = await startService('api', env, {
    API_PORT: String(port),
    API_HOST: '127.0.0.1',
    API_TOKENS: `${token}:read+control`,
    ...extra,
  });
  return {
    proc,
    port,
    call: (method, path, body) => callApi(port, token, method, path, body),
  };
}

async function callApi(port: number, token: string, method: string, path: string, body?: object) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
