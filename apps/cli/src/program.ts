import type { Command } from 'commander';
import { registerDecode } from './commands/decode.js';
import { registerDict } from './commands/dict.js';
import { registerExport } from './commands/export.js';
import { registerLink } from './commands/link.js';
import { registerRecords } from './commands/records.js';
import { registerRedecode } from './commands/redecode.js';
import { registerReplay } from './commands/replay.js';
import { registerAlerts, registerRules } from './commands/rules.js';
import { registerTail } from './commands/tail.js';
import { rootCommand } from './root-command.js';

/** The `tracehub` command and its subcommands; each subcommand lives in `commands/`. */
export function buildProgram(): Command {
  const program = rootCommand();
  registerDecode(program);
  registerReplay(program);
  registerRecords(program);
  registerExport(program);
  registerRedecode(program);
  registerDict(program);
  registerTail(program);
  registerLink(program);
  registerRules(program);
  registerAlerts(program);
  return program;
}
