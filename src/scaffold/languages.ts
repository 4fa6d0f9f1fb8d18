/** The languages `yep-ext new` scaffolds (the command table loads this, not the scaffold). */
export const LANGUAGES = ['typescript', 'python', 'rust'] as const;
export type Language = (typeof LANGUAGES)[number];
/**
 * TypeScript (plain Node.js) is the default: yep-ext itself runs on Node, so the
 * interpreter is there on every machine that can run `new`; python3 may not be,
 * and rust needs a toolchain and a build.
 */
export const DEFAULT_LANGUAGE: Language = 'typescript';

/** The short names people type (`-l ts`), as the language's usual file extension. */
const LANGUAGE_ALIASES: Record<string, Language> = { ts: 'typescript', py: 'python', rs: 'rust' };

/** What --language accepts: the full names and their short forms. */
export const LANGUAGE_CHOICES = [...LANGUAGES, ...Object.keys(LANGUAGE_ALIASES)] as const;

/** `ts` -> `typescript`; a full name as it is; anything else undefined. */
export function languageOf(text: string): Language | undefined {
  const lower = text.trim().toLowerCase();
  return (LANGUAGES as readonly string[]).includes(lower) ? (lower as Language) : LANGUAGE_ALIASES[lower];
}
