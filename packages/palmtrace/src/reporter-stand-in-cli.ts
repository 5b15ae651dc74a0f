/**
 * Runs the strict Reporter stand-in from a terminal and prints what arrives, one line per
 * event: `node dist/reporter-stand-in-cli.js [port] [host]` (default port 0 = any free one,
 * host 127.0.0.1). Useful to watch what a bridge endpoint sends.
 */
import { PalmReporterStandIn, type StandInEvent } from './reporter-stand-in.js';

const hex = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join(' ');

function describe(event: StandInEvent): string {
  const { connection } = event;
  switch (event.type) {
    case 'connected':
      return `#${connection.id} connected from ${connection.remoteAddress}:${connection.remotePort}`;
    case 'closed':
      return `#${connection.id} closed after ${connection.bytes} bytes, ${connection.messages.length} messages`;
    case 'problem':
      return `#${connection.id} PROBLEM ${event.problem.code} (${event.problem.action}): ${event.problem.description}`;
    case 'message': {
      const { message } = event;
      const module = message.module.toString(16).padStart(4, '0');
      const ids = `module=0x${module} pid=${message.processId ?? '-'} tid=${message.threadId ?? '-'} ts=${message.timestamp ?? '-'}`;
      const body = message.text === null ? `[${hex(message.data)}]` : JSON.stringify(message.text);
      return `#${connection.id} ${ids} ${body}${message.lineBreak ? '' : ' (no line break)'}`;
    }
  }
}

const port = Number(process.argv[2] ?? 0);
const host = process.argv[3] ?? '127.0.0.1';
const standIn = new PalmReporterStandIn({ host, onEvent: (event) => console.log(describe(event)) });
const bound = await standIn.listen(port);
console.log(`PalmTrace Reporter stand-in listening on ${host}:${bound}`);
process.on('SIGINT', () => {
  void standIn.close().then(() => process.exit(0));
});
