import { defineCommand } from '../cli/command.js';
import { Args, Flags } from '../cli/flags.js';
import { DEFAULT_LANGUAGE, LANGUAGE_CHOICES } from '../scaffold/languages.js';

export default defineCommand({
  summary: 'Scaffold an extension package that passes doctor as written.',
  description: `Writes <dir>/<name>/ with a plugin.json declaring exactly the facets you ask for, a capability server whose only parts to edit are its handler functions (handle_tool / handleTool, hook, prompt, command), and a README saying what to edit and how to test.

typescript (the default; -l ts) is src/server.ts, built by \`npm install && npm run build\` (tsc) and started by bin/<name>. python (-l py) is one executable file, bin/<name>: standard library only, no build. rust (-l rs) is a crate depending only on serde_json; build it into bin/ with the step the command prints.

With no --tool, --hook, --command, --prompt, --dynamic-prompt, --status or --skills, the package serves one sample tool named after it (on a terminal, new asks for the language and the tool's name first). The target directory must not exist or be empty. Details: docs/new.md.`,
  // The host's verb (`yolop extensions scaffold`), for an agent that learned it.
  aliases: ['scaffold'],
  examples: [
    '<%= config.bin %> new weather',
    '<%= config.bin %> new clock -l py --tool now --tool zones',
    '<%= config.bin %> new guard --language python --hook pre_tool_use:bash',
    "<%= config.bin %> new deploy --command ship --prompt 'Use /deploy:ship to release.' --status",
    '<%= config.bin %> new tracker --language rust --tool issues --config endpoint --config token:secret:env=TRACKER_TOKEN --dir ~',
  ],
  args: {
    name: Args.string({
      ignoreStdin: true,
      description: 'Extension name (letters, digits, _ and -); also the directory and the server command. Asked for on a terminal when left out.',
    }),
  },
  flags: {
    language: Flags.string({ char: 'l', options: [...LANGUAGE_CHOICES], description: `Language of the server (default ${DEFAULT_LANGUAGE}).` }),
    tool: Flags.string({ char: 't', multiple: true, multipleNonGreedy: true, description: 'A tool the server serves (repeatable).' }),
    hook: Flags.string({
      multiple: true,
      multipleNonGreedy: true,
      description: 'A hook: pre_tool_use or post_tool_use, optionally :GLOB for the tool names it fires on (default *). Repeatable.',
    }),
    command: Flags.string({ multiple: true, multipleNonGreedy: true, description: 'A slash command, shown as /<name>:<command> (repeatable).' }),
    prompt: Flags.string({ description: 'Static text the server adds to the system prompt.' }),
    'dynamic-prompt': Flags.boolean({ description: 'The server computes a system-prompt contribution every turn.' }),
    status: Flags.boolean({ description: 'The server shows a status in the status bar.' }),
    skills: Flags.boolean({ description: 'Ship a starter skills/<name>/SKILL.md.' }),
    config: Flags.string({
      char: 'c',
      multiple: true,
      multipleNonGreedy: true,
      description: 'A config field: FIELD[:secret][:env=NAME] (repeatable). A secret without env= gets <NAME>_<FIELD>.',
    }),
    dir: Flags.string({ char: 'd', description: 'Parent directory for the package (default: the current directory).' }),
  },
  async run(io, { args: given, flags }) {
    const [{ runNew }, { renderNew }, { cliCheckpoint }, { askNewFacets, askNewName }] = await Promise.all([
      import('../scaffold/run-new.js'),
      import('../cli/render-new.js'),
      import('../cli/cli-context.js'),
      import('../cli/new-questions.js'),
    ]);
    // `new` needs no Context (it touches no store): only its crash-test pause point.
    const checkpoint = cliCheckpoint(io.io);
    const args = { name: given.name ?? (await askNewName(io.io, !io.json)) };
    const asked = await askNewFacets(args.name, flags, io.io, !io.json);
    const result = await runNew(
      {
        name: args.name,
        ...((asked.language ?? flags.language) !== undefined ? { language: asked.language ?? flags.language } : {}),
        tools: asked.tools ?? flags.tool ?? [],
        hooks: flags.hook ?? [],
        commands: flags.command ?? [],
        ...(flags.prompt !== undefined ? { prompt: flags.prompt } : {}),
        dynamicPrompt: flags['dynamic-prompt'],
        status: flags.status,
        skills: flags.skills,
        config: flags.config ?? [],
      },
      {
        cwd: io.io.cwd,
        ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
        ...(io.io.env.HOME ? { home: io.io.env.HOME } : {}),
        ...(checkpoint ? { checkpoint } : {}),
      },
    );
    io.log(renderNew(result, undefined, flags.quiet === true));
    // For --json: every key present, null (or false) when it does not apply (docs/json.md).
    return {
      ...result,
      build: result.build ?? null,
      buildNeeds: result.buildNeeds ?? null,
      spec: {
        ...result.spec,
        prompt: result.spec.prompt ?? null,
        sampleTool: result.spec.sampleTool === true,
        config: result.spec.config.map((c) => ({ ...c, env: c.env ?? null, envDerived: c.envDerived === true })),
      },
    };
  },
});
