import { Command } from 'commander';
import { registerDecode } from './commands/decode.js';
import { registerDict } from './commands/dict.js';
import { registerExport } from './commands/export.js';
import { registerLink } from './commands/link.js';
import { registerRecords } from './commands/records.js';
import { registerRedecode } from './commands/redecode.js';
import { registerReplay } from './commands/replay.js';
import { registerTail } from './commands/tail.js';

/** The `tracehub` command and its subcommands; each subcommand lives in `commands/`. */
export function buildProgram(): Command {
  const program = new Command('tracehub')
    .description('tracehub: decode, replay and query embedded trace streams (QS, STP, SWD)')
    .showHelpAfterError();
  registerDecode(program);
  registerReplay(program);
  registerRecords(program);
  registerExport(program);
  registerRedecode(program);
  registerDict(program);
  registerTail(program);
  registerLink(program);
  return program;
}
