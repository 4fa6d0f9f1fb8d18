/**
 * What a shell should offer when the user presses Tab: `yep-ext __complete
 * <words…>` (the words after `yep-ext`, the last one being the word under the
 * cursor, possibly empty) prints one candidate per line, `value<TAB>description`
 * where there is one, and a line `:files` or `:dirs` when the shell should also
 * complete paths. The scripts `yep-ext completion bash|zsh|fish` prints
 * (completion-scripts.ts) call it and filter by the typed prefix.
 *
 * Pure apart from two lookups it is given (installed names, an extension's
 * secret fields); the command list comes from the command table (complete-run.ts;
 * also accepting oclif's config.commands, which repeats a command under each
 * alias), so a new command or flag completes with no change here. What a
 * positional argument holds (an installed name, a path, a command) is the one
 * thing the definitions do not say: ARG_KINDS below.
 */

export interface CompletionFlag {
  name: string;
  type: 'boolean' | 'option';
  char?: string | undefined;
  options?: readonly string[] | undefined;
  allowNo?: boolean | undefined;
  hidden?: boolean | undefined;
  description?: string | undefined;
  summary?: string | undefined;
}

export interface CompletionCommand {
  id: string;
  aliases?: readonly string[] | undefined;
  hidden?: boolean | undefined;
  summary?: string | undefined;
  description?: string | undefined;
  strict?: boolean | undefined;
  flags?: Record<string, CompletionFlag> | undefined;
  args?: Record<string, { name?: string; options?: readonly string[] | undefined }> | undefined;
}

export interface CompletionLookups {
  installedNames(): string[];
  /** Secret config fields of an installed extension ([] when none or unknown). */
  secretFields(name: string): Promise<string[]>;
}

type ArgKind = 'installed' | 'installed-or-path' | 'filesystem' | 'command' | 'secret-field';

/** What each positional argument of a command holds; the last kind repeats for variadic commands. */
const ARG_KINDS: Record<string, ArgKind[]> = {
  enable: ['installed'],
  disable: ['installed'],
  remove: ['installed'],
  update: ['installed'],
  'set-secret': ['installed', 'secret-field'],
  doctor: ['installed-or-path'],
  install: ['filesystem'],
  'lock:export': ['filesystem'],
  help: ['command'],
};

/** Flags whose value is a path (the shell completes files or directories). */
const PATH_FLAGS: Record<string, ':files' | ':dirs'> = { lockfile: ':files', dir: ':dirs' };

const oneLine = (text: string | undefined): string => (text ?? '').split('\n')[0]!.trim();
const line = (value: string, description?: string): string => (description ? `${value}\t${description}` : value);

/** Visible commands, one entry each (oclif's config.commands repeats a command under each alias). */
function visible(commands: CompletionCommand[]): CompletionCommand[] {
  return commands.filter((c) => !c.hidden && !(c.aliases ?? []).includes(c.id));
}

/** The command `words` start with (longest match, aliases included) and how many words it took. */
function findCommand(commands: CompletionCommand[], words: string[]): { command: CompletionCommand; used: number } | undefined {
  for (let n = Math.min(words.length, 3); n >= 1; n--) {
    const id = words.slice(0, n).join(':');
    const command = visible(commands).find((c) => c.id === id || (c.aliases ?? []).includes(id));
    if (command) return { command, used: n };
  }
  return undefined;
}

/** Command words that can follow `prefix` (top level: commands, aliases and topics; after a topic: its commands). */
function nextCommandWords(commands: CompletionCommand[], prefix: string[]): string[] {
  const out = new Map<string, string>();
  for (const c of visible(commands)) {
    for (const id of [c.id, ...(c.aliases ?? [])]) {
      const parts = id.split(':');
      if (parts.length <= prefix.length || prefix.some((p, i) => parts[i] !== p)) continue;
      const word = parts[prefix.length] as string;
      const isLeaf = parts.length === prefix.length + 1;
      if (!out.has(word) || isLeaf) out.set(word, isLeaf ? (id === c.id ? oneLine(c.summary ?? c.description) : `alias of ${c.id.split(':').join(' ')}`) : '');
    }
  }
  return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([w, d]) => line(w, d));
}

function flagCandidates(command: CompletionCommand): string[] {
  const out: string[] = [];
  for (const f of Object.values(command.flags ?? {})) {
    if (f.hidden) continue;
    const about = oneLine(f.summary ?? f.description);
    out.push(line(`--${f.name}`, about));
    if (f.allowNo) out.push(line(`--no-${f.name}`, about));
  }
  out.push(line('--help', 'Show help for this command.'));
  return out;
}

/** The flag a word names (`--lockfile`, `-l`), if it is one of the command's. */
function flagOf(command: CompletionCommand, word: string): CompletionFlag | undefined {
  const flags = Object.values(command.flags ?? {});
  if (word.startsWith('--')) return flags.find((f) => f.name === word.slice(2));
  if (/^-[A-Za-z]$/.test(word)) return flags.find((f) => f.char === word.slice(1));
  return undefined;
}

/** Candidates for the last word of `words` (the words after `yep-ext`). */
export async function completeWords(commands: CompletionCommand[], words: string[], lookups: CompletionLookups): Promise<string[]> {
  const current = words.at(-1) ?? '';
  const before = words.slice(0, -1);
  const found = findCommand(commands, before);
  if (!found) {
    // Still naming the command: its next word (after a topic such as `lock`, that topic's commands).
    return current.startsWith('-') ? [line('--help', 'Show help.'), line('--version', 'Show the version.')] : nextCommandWords(commands, before);
  }
  const { command, used } = found;
  // Walk the words after the command: flags, their values, and positional arguments.
  const positional: string[] = [];
  let pendingValue: CompletionFlag | undefined;
  for (const w of before.slice(used)) {
    if (pendingValue) {
      pendingValue = undefined;
      continue;
    }
    if (w === '--') break;
    const flag = flagOf(command, w);
    if (flag) {
      if (flag.type === 'option') pendingValue = flag;
      continue;
    }
    if (!w.startsWith('-')) positional.push(w);
  }
  if (pendingValue) {
    if (pendingValue.options?.length) return pendingValue.options.map((o) => line(o));
    const kind = PATH_FLAGS[pendingValue.name];
    return kind ? [kind] : [];
  }
  if (current.startsWith('-')) return flagCandidates(command);

  const argDefs = Object.values(command.args ?? {});
  const index = positional.length;
  const fixed = argDefs[index]?.options;
  if (fixed?.length) return fixed.map((o) => line(o));
  const kinds = ARG_KINDS[command.id] ?? [];
  const variadic = command.strict === false;
  const kind = kinds[index] ?? (variadic ? kinds.at(-1) : undefined);
  // A variadic argument never repeats a name already given.
  const fresh = (names: string[]): string[] => names.filter((n) => !positional.includes(n)).sort();
  switch (kind) {
    case 'installed':
      return fresh(lookups.installedNames());
    case 'installed-or-path':
      return [...fresh(lookups.installedNames()), ':dirs'];
    case 'filesystem':
      return [':files'];
    case 'secret-field':
      return positional[0] ? (await lookups.secretFields(positional[0])).sort() : [];
    case 'command':
      return nextCommandWords(commands, positional);
    default:
      return [];
  }
}
