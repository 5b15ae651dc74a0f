import { readFileSync } from 'node:fs';

/** The kernel's high-water mark of process `pid`'s resident memory so far, MB (VmHWM, /proc). */
export function peakRssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}
