import { Command } from 'commander';

/** The bare `tracehub` command, before any subcommand is registered. */
export function rootCommand(): Command {
  return new Command('tracehub')
    .description('tracehub: decode, replay and query embedded trace streams (QS, STP, SWD)')
    .showHelpAfterError();
}
