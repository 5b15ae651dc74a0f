#!/usr/bin/env node
/**
 * Checks the configuration of several apps in this one process, for `npm start`: each app's
 * built entry point is imported with its environment and TRACEHUB_CHECK_CONFIG_ONLY=1, so it
 * checks and reports (packages/service-kit, CONFIG_CHECK_REPORT) instead of starting. The
 * modules the apps share load once: a fraction of the time of one process per app.
 *
 *   TRACEHUB_CHECK_APPS  JSON [{ "name": "api", "entry": "apps/api/dist/main.js", "env": {...} }]
 *
 * Prints a JSON array of { service, code, message } (code 0: it would start; 2: bad configuration).
 */
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url);
const given = process.env;
const apps = JSON.parse(given.TRACEHUB_CHECK_APPS ?? '[]');
const outcomes = [];
let current;
globalThis[Symbol.for('tracehub.configCheckReport')] = (outcome) => {
  outcomes.push(outcome);
  current?.();
};

for (const { name, entry, env } of apps) {
  // Each entry point reads process.env when it runs, which is when it is imported.
  process.env = { ...env, TRACEHUB_CHECK_CONFIG_ONLY: '1' };
  const reported = new Promise((resolve) => {
    current = resolve;
  });
  try {
    await import(pathToFileURL(new URL(entry, root).pathname).href);
    await reported;
  } catch (error) {
    outcomes.push({ service: name, code: 1, message: `cannot load ${entry}: ${error?.message ?? error}` });
  }
}
process.stdout.write(`${JSON.stringify(outcomes)}\n`);
process.exit(0);
