import { configFromOptions, QS_DEFAULT_OPTIONS, QSPY_SIZE_OPTIONS, type QsTargetConfig } from './config.js';
import { makeKey, type QsDictionaries, type QsKey } from './dictionaries.js';
import { zeroPad } from './format.js';

/**
 * qspy's `.dic` file: the target configuration (the `-v -T -O -F -S -E -Q -P -B -C -t` lines
 * qspy writes with `-d`), then the object, function, user-record and signal dictionaries,
 * each as its key size, one `0x<key> <name>` line per entry (signals: `<sig> 0x<obj> <name>`)
 * and `***`. qspy reads one back after each target info of the same build.
 */
export interface QsDictionaryFile {
  /** The configuration the file was saved with (its build stamp included; no endianness). */
  config: Omit<QsTargetConfig, 'bigEndian'>;
  obj: Array<[QsKey, string]>;
  fun: Array<[QsKey, string]>;
  usr: Array<[QsKey, string]>;
  sig: Array<{ sig: number; obj: QsKey; name: string }>;
}

/** A `.dic` text qspy would not read: says which line and why. */
export class DictionaryFileError extends Error {
  override name = 'DictionaryFileError';
  constructor(
    readonly line: number,
    reason: string,
  ) {
    super(`line ${line}: ${reason}`);
  }
}

const TWO_32 = 4294967296;

/** A hexadecimal address as a dictionary key (exact beyond 2^53 too). */
function keyOf(hex: string): QsKey {
  const digits = hex.padStart(16, '0');
  return makeKey(Number.parseInt(digits.slice(0, 8), 16), Number.parseInt(digits.slice(8), 16));
}

function keyHex(key: QsKey, size: number): string {
  const [hi, lo] =
    typeof key === 'number'
      ? [Math.floor(key / TWO_32), key % TWO_32]
      : (key.split(':').map(Number) as [number, number]);
  const lo8 = lo.toString(16).toUpperCase().padStart(8, '0');
  // qspy writes 8 hex digits (the key cut to 32 bits) for key sizes up to 4, else 16.
  return size <= 4 ? lo8 : `${hi.toString(16).toUpperCase().padStart(8, '0')}${lo8}`;
}

/** Reads a `.dic` text as qspy does; throws `DictionaryFileError` where qspy would give up. */
export function parseDictionaryFile(text: string): QsDictionaryFile {
  const lines = text.split(/\r?\n/);
  const { bigEndian: _, ...config } = configFromOptions(QS_DEFAULT_OPTIONS);

  const file: QsDictionaryFile = { config, obj: [], fun: [], usr: [], sig: [] };
  let i = 0;
  const digit = (s: string, at: number) => s.charCodeAt(at) - 48;
  /**
   * The key size line that opens a section, then its entries: as qspy reads it, the first
   * line that is not an entry (`***`) ends the section and is consumed with it.
   */
  const section = (isEntry: (line: string) => boolean, parseEntry: (line: string, size: number, n: number) => void) => {
    const n = i + 1;
    const size = Number.parseInt(lines[i++] ?? '', 10);
    if (!(size >= 1 && size <= 8))
      throw new DictionaryFileError(n, 'a dictionary must start with its key size, 1 to 8');
    for (; i < lines.length && isEntry(lines[i] as string); i++) parseEntry(lines[i] as string, size, i + 1);
    i++;
  };
  while (i < lines.length) {
    const line = lines[i] as string;
    const n = i + 1;
    if (line === '' || line.startsWith('#')) {
      i++;
      continue;
    }
    if (line.startsWith('-')) {
      const option = line[1] ?? '';
      if (option === 'v' && /^-v\d{3}$/.test(line))
        config.version = 100 * digit(line, 2) + 10 * digit(line, 3) + digit(line, 4);
      else if (option === 't' && /^-t\d{6}_\d{6}$/.test(line)) {
        const two = (at: number) => 10 * digit(line, at) + digit(line, at + 1);
        // Stored as the target info gives it: second, minute, hour, day, month, year.
        config.build = [two(13), two(11), two(9), two(6), two(4), two(2)];
      } else if (QSPY_SIZE_OPTIONS[option] && /^-[A-Z][1248]$/.test(line))
        config[QSPY_SIZE_OPTIONS[option]] = digit(line, 2);
      else
        throw new DictionaryFileError(
          n,
          `'${line}' is not an option qspy writes (-v, -T, -O, -F, -S, -E, -Q, -P, -B, -C, -t)`,
        );
      i++;
      continue;
    }
    i++;
    if (line === 'Obj-Dic:' || line === 'Fun-Dic:' || line === 'Usr-Dic:') {
      const into = line === 'Obj-Dic:' ? file.obj : line === 'Fun-Dic:' ? file.fun : file.usr;
      section(
        (l) => l.startsWith('0x'),
        (entry, size, at) => {
          const m = (size <= 4 ? /^0x([0-9A-Fa-f]{8}) (.*)$/ : /^0x([0-9A-Fa-f]{16}) (.*)$/).exec(entry);
          if (!m) throw new DictionaryFileError(at, `expected '0x<${size <= 4 ? 8 : 16} hex digits> <name>'`);
          into.push([keyOf(m[1] as string), m[2] as string]);
        },
      );
    } else if (line === 'Sig-Dic:') {
      section(
        (l) => l.startsWith('0'),
        (entry, size, at) => {
          const m = (size <= 4 ? /^(\d{8}) 0x([0-9A-Fa-f]{8}) (.*)$/ : /^(\d{8}) 0x([0-9A-Fa-f]{16}) (.*)$/).exec(
            entry,
          );
          if (!m || Number(m[1]) === 0)
            throw new DictionaryFileError(at, "expected '<signal, 8 digits> 0x<object> <name>'");
          file.sig.push({ sig: Number(m[1]), obj: keyOf(m[2] as string), name: m[3] as string });
        },
      );
    } else {
      throw new DictionaryFileError(
        n,
        `'${line.slice(0, 40)}' is not an option or a dictionary heading (Obj-Dic:, Fun-Dic:, Usr-Dic:, Sig-Dic:)`,
      );
    }
  }
  return file;
}

/** The `.dic` text qspy writes for this configuration and these dictionaries (byte for byte). */
export function formatDictionaryFile(config: QsTargetConfig, dicts: QsDictionaries): string {
  const b = config.build;
  const out = [
    `-v${zeroPad(config.version, 3)}`,
    `-T${config.timeSize}`,
    `-O${config.objPtrSize}`,
    `-F${config.funPtrSize}`,
    `-S${config.sigSize}`,
    `-E${config.eventSize}`,
    `-Q${config.queueCtrSize}`,
    `-P${config.poolCtrSize}`,
    `-B${config.poolBlkSize}`,
    `-C${config.teCtrSize}`,
    `-t${[b[5], b[4], b[3]].map((v) => zeroPad(v ?? 0, 2)).join('')}_${[b[2], b[1], b[0]].map((v) => zeroPad(v ?? 0, 2)).join('')}`,
    '',
  ];
  const section = (title: string, size: number, entries: Array<[QsKey, string]>) => {
    out.push(title, String(size));
    for (const [key, name] of entries) out.push(`0x${keyHex(key, size)} ${name}`);
    out.push('***');
  };
  section('Obj-Dic:', dicts.obj.keySize, dicts.obj.entries());
  section('Fun-Dic:', dicts.fun.keySize, dicts.fun.entries());
  section('Usr-Dic:', dicts.usr.keySize, dicts.usr.entries());
  out.push('Sig-Dic:', String(dicts.sig.ptrSize));
  for (const e of dicts.sig.list()) out.push(`${zeroPad(e.sig, 8)} 0x${keyHex(e.obj, dicts.sig.ptrSize)} ${e.name}`);
  out.push('***');
  return `${out.join('\n')}\n`;
}

/** Puts a file's entries into the dictionaries, replacing what they held (qspy's read). */
export function loadDictionaryFile(dicts: QsDictionaries, file: QsDictionaryFile): void {
  dicts.obj.reset();
  dicts.fun.reset();
  dicts.usr.reset();
  dicts.sig.reset();
  for (const [key, name] of file.obj) dicts.obj.put(key, name);
  for (const [key, name] of file.fun) dicts.fun.put(key, name);
  for (const [key, name] of file.usr) dicts.usr.put(key, name);
  for (const e of file.sig) dicts.sig.put(e.sig, e.obj, e.name);
}
