import { spawn } from 'node:child_process';

/** Runs a command, reads a little of its stdout and then closes the pipe, as `| head` does. */
export function readThenClose(
  command: string,
  args: string[],
): Promise<{ status: number | null; stderr: string; received: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let received = 0;
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
    });
    child.stdout.once('data', (b: Buffer) => {
      received = b.length;
      child.stdout.destroy();
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stderr, received }));
  });
}
