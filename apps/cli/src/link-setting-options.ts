// The link settings as command-line flags: the settings' own names in kebab case
// (`--obj-ptr-size 8`, `--little-endian-masters 0x11,48`), as `tracehub decode` spells them.
import { readFileSync } from 'node:fs';
import {
  type LinkSettingsDocument,
  linkSettingsFromText,
  type Protocol,
  QsLinkSettingsSchema,
  StpLinkSettingsSchema,
} from '@tracehub/contracts';
import { type Command, Option } from 'commander';

const kebab = (name: string) => name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const camel = (flag: string) => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** Flag -> [protocols, setting name]; `version` is two flags, one per protocol family. */
function settingFlags(): Map<string, { protocols: Protocol[]; name: string; description: string }> {
  const flags = new Map<string, { protocols: Protocol[]; name: string; description: string }>();
  for (const [schema, protocols, prefix] of [
    [QsLinkSettingsSchema, ['qs'], 'qs'],
    [StpLinkSettingsSchema, ['stp', 'swd'], 'stp'],
  ] as const) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const flag = name === 'version' ? `${prefix}-version` : kebab(name);
      const known = flags.get(flag);
      if (known) known.protocols.push(...protocols);
      else flags.set(flag, { protocols: [...protocols], name, description: String(property.description ?? '') });
    }
  }
  return flags;
}

/** A command's options with its link-setting flags among them, by commander's camel-case names. */
export interface LinkSettingFlags {
  [option: string]: unknown;
}

/** Adds one flag per link setting. */
export function addLinkSettingOptions(cmd: Command): void {
  for (const [flag, { protocols, description }] of settingFlags()) {
    cmd.addOption(new Option(`--${flag} <value>`, `${protocols.join('/')} link setting: ${description}`));
  }
}

/** The settings document the flags give for a link of `protocol`; throws naming a flag that does not fit. */
export function linkSettingsFromOptions(protocol: Protocol, opts: LinkSettingFlags): LinkSettingsDocument {
  const pairs: Array<[string, string]> = [];
  for (const [flag, { protocols, name }] of settingFlags()) {
    const value = opts[camel(flag)];
    if (value === undefined) continue;
    if (!protocols.includes(protocol))
      throw new Error(`--${flag} is a ${protocols.join('/')} setting, not ${protocol}`);
    pairs.push([name, String(value)]);
  }
  return linkSettingsFromText(protocol, pairs, (path) => readFileSync(path, 'latin1'));
}
