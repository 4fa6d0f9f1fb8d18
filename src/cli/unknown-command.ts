/**
 * What `yep-ext instal lsp`, `yep-ext lock exprt` and `yep-ext help instal` say:
 * the word as typed (the dispatcher hands over `instal:lsp`, the words it could
 * not place joined as an id, which is never shown), the nearest command if one
 * is within a typo's reach, and where the list of commands is. Used by the
 * dispatcher and by help for an unknown subject, which then print it like any
 * other error (`--json` included) and exit 2.
 */
import { YepError } from '../core/errors.js';
import { closestMatches } from '../core/text/closest.js';
import { COMMANDS, findCommand, topicNames as topicIds } from './command-table.js';

/** Visible command names and aliases as typed (`lock export`, `rm`). */
function commandNames(): string[] {
  return [...new Set(Object.entries(COMMANDS).flatMap(([id, d]) => [id, ...(d.aliases ?? [])].map((n) => n.split(':').join(' '))))];
}

/** Visible topics as typed (`lock`, `policy`, `cache`): `yep-ext cach` means one of them. */
function topicNames(): string[] {
  return topicIds();
}

const isTopic = (word: string): boolean => topicIds().includes(word);

/**
 * `polcy check`, `cach verify`, `lok export`: a typo of a topic followed by a word
 * is the topic's command of that word (or the nearest one), not whichever command
 * happens to start like the first word.
 */
function topicTypoGuess(words: string[]): string | undefined {
  if (words.length < 2 || isTopic(words[0]!)) return undefined;
  const [topic] = closestMatches(words[0]!, topicNames());
  if (!topic) return undefined;
  const names = commandNames();
  const meant = `${topic} ${words[1]}`;
  return names.includes(meant)
    ? meant
    : (closestMatches(
        meant,
        names.filter((n) => n.startsWith(`${topic} `)),
      )[0] ?? topic);
}

/** The E_USAGE error for an unknown command id (the typed words joined with colons). */
export function unknownCommandError(id: string): YepError {
  if (id.startsWith('-')) {
    return new YepError('E_USAGE', `${id.split(':')[0]} is not a flag of yep-ext itself: flags go after a command.`, {
      hint: 'For example `yep-ext list --json`; `yep-ext help` lists every command.',
    });
  }
  const words = id.split(/[: ]/).filter(Boolean);
  // Words after a command that takes no arguments are joined into the id
  // (`list x` → list:x): that is an unexpected argument, not an unknown command.
  for (let k = words.length - 1; k >= 1; k--) {
    if (findCommand(words.slice(0, k).join(':'))) {
      const name = words.slice(0, k).join(' ');
      const extra = words.slice(k).map((w) => JSON.stringify(w.length > 60 ? `${w.slice(0, 60)}…` : w));
      return new YepError('E_USAGE', `\`yep-ext ${name}\` takes no arguments; unexpected: ${extra.join(', ')}.`, {
        hint: `\`yep-ext ${name} --help\` shows its usage.`,
      });
    }
  }
  // `lock exprt`: a known topic followed by an unknown word is the command the user meant to name.
  const typed = words.length > 1 && isTopic(words[0]!) ? `${words[0]} ${words[1]}` : (words[0] ?? id);
  const list = '`yep-ext help` lists every command.';
  // cargo and gh have a version command; here it is the flag.
  if (typed === 'version')
    return new YepError('E_USAGE', '"version" is not a yep-ext command.', { hint: `\`yep-ext --version\` prints yep-ext's version. ${list}` });
  const guess = topicTypoGuess(words) ?? closestMatches(typed, [...commandNames(), ...topicNames()])[0];
  return new YepError('E_USAGE', `"${typed}" is not a yep-ext command.`, { hint: guess ? `Did you mean \`yep-ext ${guess}\`? ${list}` : list });
}
