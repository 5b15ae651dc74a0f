#!/usr/bin/env node
// Keeps package-lock.json installable with `npm ci` on every platform.
//
// Packages that ship native binaries (biome, rollup, turbo) list one optional dependency per
// platform. When the registry an install runs against does not carry some of those platform
// packages at the exact version, npm writes no lock entry for them, and `npm ci` then refuses
// the lock file ("Missing: ... from lock file"). This adds the missing entries as optional
// packages with their os/cpu/libc, which npm skips on every other platform. It runs after each
// `npm install` (root postinstall) and changes nothing when the lock file is complete.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const lockPath = fileURLToPath(new URL('../package-lock.json', import.meta.url));
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages ?? {};
const OSES = ['android', 'darwin', 'freebsd', 'openbsd', 'openharmony', 'win32', 'windows', 'linux', 'sunos', 'aix'];
const CPUS = ['arm64', 'x64', 'arm', 'loong64', 'ppc64', 'riscv64', 's390x', 'ia32', 'mips64el', '64'];

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(entry.optionalDependencies ?? {})) {
    if (packages[`node_modules/${name}`] || packages[`${path}/node_modules/${name}`]) continue;
    const platform = platformOf(name);
    if (!platform || !/^\d+\.\d+\.\d+/.test(range)) continue; // not a per-platform binary package
    const added_ = { version: range, cpu: [platform.cpu], optional: true, os: [platform.os] };
    if (platform.libc) added_.libc = [platform.libc];
    packages[`node_modules/${name}`] = added_;
    added++;
  }
}
if (added > 0) {
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`complete-lockfile: added ${added} platform package entries to package-lock.json`);
}

function platformOf(name) {
  const tail = name.split('/').pop();
  const os = OSES.find((o) => tail.includes(o));
  const cpu = CPUS.find((c) => tail.includes(`-${c}`));
  if (!os || !cpu) return undefined;
  const libc = tail.includes('musl') ? 'musl' : os === 'linux' ? 'glibc' : undefined;
  return { os: os === 'windows' ? 'win32' : os, cpu: cpu === '64' ? 'x64' : cpu, libc };
}
