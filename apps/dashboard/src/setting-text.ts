/** A link setting's value as the link page shows it. */

/** What a `.dic` text says of itself, in one line: its build and how many names it holds. */
export function dictionarySummary(text: string): string {
  const build = /^-t(\d{6}_\d{6})$/m.exec(text)?.[1];
  const names = text.split('\n').filter((l) => /^(0x[0-9A-Fa-f]+|\d{8} 0x[0-9A-Fa-f]+) /.test(l)).length;
  return `qspy .dic file: ${names} names${build ? `, build ${build}` : ''}`;
}

/** A settings value as text: a list as `17, 18`, a .dic text as its summary. */
export function settingText(name: string, value: unknown): string {
  if (name === 'dictionaries' && typeof value === 'string') return dictionarySummary(value);
  return Array.isArray(value) ? value.join(', ') : String(value);
}
