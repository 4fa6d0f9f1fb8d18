/**
 * `yep-ext new NAME` on a terminal with nothing but a name: ask for the language and
 * the first tool's name, as `npm init` asks, instead of guessing (and, for `yep-ext
 * new` alone, the name first). Without a terminal
 * (or with any facet flag) nothing is asked and the request stands as given: the
 * sample tool is the scaffold's own default (scaffold/request.ts).
 */
import { YepError } from '../core/errors.js';
import { isValidName } from '../core/package/names.js';
import { DEFAULT_LANGUAGE, LANGUAGES, type Language, hasContribution, languageOf, sampleToolName } from '../scaffold/request.js';
import { askChoice, askText, type PromptIo } from './prompts.js';

/** The facet flags of `new`, as parsed. */
interface NewFlags {
  language?: string | undefined;
  tool?: string[] | undefined;
  hook?: string[] | undefined;
  command?: string[] | undefined;
  prompt?: string | undefined;
  'dynamic-prompt'?: boolean | undefined;
  status?: boolean | undefined;
  skills?: boolean | undefined;
}

const LANGUAGE_LABELS: Record<Language, string> = {
  typescript: 'TypeScript (Node.js; built with tsc)',
  python: 'Python 3 (no build)',
  rust: 'Rust (built with cargo)',
};

/** What the user answered; empty when nothing was asked. */
export async function askNewFacets(
  name: string,
  flags: NewFlags,
  io: PromptIo & { stderr: { isTTY: boolean } },
  mayAsk: boolean,
): Promise<{ language?: Language; tools?: string[] }> {
  const asked = hasContribution({
    tools: flags.tool,
    hooks: flags.hook,
    commands: flags.command,
    prompt: flags.prompt,
    dynamicPrompt: flags['dynamic-prompt'],
    status: flags.status,
    skills: flags.skills,
  });
  if (asked || !mayAsk || !io.stdin.isTTY || !io.stderr.isTTY) return {};
  const language =
    flags.language !== undefined
      ? languageOf(flags.language)
      : await askChoice(
          io,
          'Language of the server',
          LANGUAGES.map((value) => ({ value, name: LANGUAGE_LABELS[value] })),
          DEFAULT_LANGUAGE,
        );
  const suggested = isValidName(sampleToolName(name)) ? sampleToolName(name) : 'hello';
  const tool = await askText(io, 'Name of its first tool (more with --tool later)', suggested, (v) =>
    isValidName(v.trim()) ? true : 'Use letters, digits, _ and - (the host rule).',
  );
  return { ...(language ? { language } : {}), tools: [tool.trim()] };
}

/** The name for `yep-ext new` without NAME: asked on a terminal; without one, the usage error that says what to give. */
export async function askNewName(io: PromptIo & { stderr: { isTTY: boolean } }, mayAsk: boolean): Promise<string> {
  if (!mayAsk || !io.stdin.isTTY || !io.stderr.isTTY) {
    throw new YepError('E_USAGE', '`yep-ext new` needs NAME: extension name (letters, digits, _ and -); also the directory and the server command.', {
      hint: 'For example: yep-ext new weather (on a terminal, `yep-ext new` alone asks for it).',
    });
  }
  const name = await askText(io, 'Name of the extension (also its directory and server command)', '', (v) =>
    isValidName(v.trim()) ? true : 'Use letters, digits, _ and - (the host rule).',
  );
  return name.trim();
}
