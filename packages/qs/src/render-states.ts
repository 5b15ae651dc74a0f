/** Names remembered by one map; past this many it starts again (what was named keeps its number). */
const NAMES_MAX = 16384;

/**
 * Numbers for strings, the same number for the same string while the string is remembered; a
 * string forgotten (past NAMES_MAX) gets a new number, never one given before.
 */
class Numbering {
  private next: number;
  private readonly numbers = new Map<string, number>();

  constructor(first: number) {
    this.next = first;
  }

  of(name: string): number {
    let n = this.numbers.get(name);
    if (n === undefined) {
      // Forgetting only makes what was named unrecognisable, never confused with something else.
      if (this.numbers.size >= NAMES_MAX) this.numbers.clear();
      n = this.next++;
      this.numbers.set(name, n);
    }
    return n;
  }

  /** A number for something that has no name: never given before, nor after. */
  fresh(): number {
    return this.next++;
  }
}

/** Transitions kept by the direct-mapped caches in front of the maps (a power of two). */
const RECENT = 1024;
/** The parts of a state: the configuration, and the objects', functions', signals' and user records' dictionaries. */
const PARTS = 5;

/** What one dictionary holds, as a number (0: empty). */
export class DictionaryContent {
  /** 0 is the empty dictionary: as made, and after every reset. */
  node = 0;
  /**
   * The content reached by each change, by the content it is made from and the change: the
   * content is the path of changes from the last reset, each node of that tree a number.
   */
  private readonly after = new Numbering(1);
  // The last change made from each node (direct-mapped by node): a target that sends its
  // dictionaries again takes the same path, and a hit makes no string.
  private readonly recentFrom = new Int32Array(RECENT).fill(-1);
  private readonly recentA: (number | string)[] = new Array<number | string>(RECENT).fill(0);
  private readonly recentB: (number | string)[] = new Array<number | string>(RECENT).fill(0);
  private readonly recentName: string[] = new Array<string>(RECENT).fill('');
  private readonly recentTo = new Int32Array(RECENT);

  constructor(private readonly states: RenderStates) {}

  /**
   * A change, described completely by `a`, `b` and `name` (its effect on what the dictionary
   * renders: which entry, and what it holds now; the dictionary decides what `a` and `b` are).
   */
  change(a: number | string, b: number | string, name: string): void {
    const from = this.node;
    const slot = from & (RECENT - 1);
    if (
      this.recentFrom[slot] === from &&
      this.recentA[slot] === a &&
      this.recentB[slot] === b &&
      this.recentName[slot] === name
    ) {
      this.node = this.recentTo[slot];
    } else {
      this.node = this.after.of(`${from} ${a} ${b}=${name}`);
      this.recentFrom[slot] = from;
      this.recentA[slot] = a;
      this.recentB[slot] = b;
      this.recentName[slot] = name;
      this.recentTo[slot] = this.node;
    }
    this.states.update();
  }

  /** Emptied. */
  reset(): void {
    this.node = 0;
    this.states.update();
  }

  /** Changed in a way not described (a snapshot loaded): content never seen before. */
  unknown(): void {
    this.node = this.after.fresh();
    this.states.update();
  }
}

/**
 * The state of what a record's text depends on besides its own bytes (the dictionaries of
 * objects, functions, signals and user records, and the configuration), as a number: whenever the number is
 * the same, every record renders alike. Lines and frames kept for reuse are stamped with it.
 *
 * A dictionary's content is the path of changes since it was last emptied, so a target that
 * resets and sends the same dictionaries again (as targets do after every reset) comes back to
 * the states of its last session, and what was kept for them holds again. (A change count,
 * the stamp before, made every kept line stale at every dictionary entry.) The numbers are
 * exact, not hashes: equal numbers are equal paths.
 */
export class RenderStates {
  /** The current state; never 0, which kept lines' stamps hold while they hold nothing. */
  state = 1;
  readonly obj = new DictionaryContent(this);
  readonly fun = new DictionaryContent(this);
  readonly sig = new DictionaryContent(this);
  readonly usr = new DictionaryContent(this);
  private config = 0;
  private readonly configs = new Numbering(1);
  private readonly states = new Numbering(2);

  /** Takes the configuration, described completely by `config`. */
  configure(config: string): void {
    this.config = this.configs.of(config);
    this.update();
  }

  // The last states found, direct-mapped by their parts (as DictionaryContent's recent changes).
  private readonly recentParts = new Int32Array(RECENT * PARTS).fill(-1);
  private readonly recentState = new Int32Array(RECENT);

  /** @internal After any part changed. */
  update(): void {
    const c = this.config;
    const o = this.obj.node;
    const f = this.fun.node;
    const s = this.sig.node;
    const u = this.usr.node;
    const h =
      Math.imul(Math.imul(Math.imul(Math.imul(c, 0x9e3779b1) ^ o, 0x85ebca6b) ^ f, 0xc2b2ae35) ^ s, 0x27d4eb2f) ^ u;
    const slot = (h ^ (h >>> 15)) & (RECENT - 1);
    const at = slot * PARTS;
    const parts = this.recentParts;
    if (parts[at] === c && parts[at + 1] === o && parts[at + 2] === f && parts[at + 3] === s && parts[at + 4] === u) {
      this.state = this.recentState[slot];
      return;
    }
    this.state = this.states.of(`${c} ${o} ${f} ${s} ${u}`);
    parts[at] = c;
    parts[at + 1] = o;
    parts[at + 2] = f;
    parts[at + 3] = s;
    parts[at + 4] = u;
    this.recentState[slot] = this.state;
  }
}
