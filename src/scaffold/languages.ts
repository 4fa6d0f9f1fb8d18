/** The languages `yep-ext new` scaffolds (the command table loads this, not the scaffold). */
export const LANGUAGES = ['typescript', 'python', 'rust'] as const;
export type Language = (typeof LANGUAGES)[number];
/**
 * TypeScript (plain Node.js) is the default: yep-ext itself runs on Node, so the
 * interpreter is there on every machine that can run `new`; python3 may not be,
 * and rust needs a toolchain and a build.
 */
export const DEFAULT_LANGUAGE: Language = 'typescript';
