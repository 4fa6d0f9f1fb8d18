import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { cliCheckpoint } from '../cli/cli-context.js';
import { renderNew } from '../cli/render-new.js';
import { runNew, type NewResult } from '../scaffold/run-new.js';
import { askNewFacets } from '../cli/new-questions.js';
import { DEFAULT_LANGUAGE, LANGUAGE_CHOICES } from '../scaffold/request.js';

export default class New extends BaseCommand {
  static override summary = 'Scaffold a new extension package that passes doctor before any logic is written.';

  static override description =
    `Writes <dir>/<name>/ with a plugin.json declaring exactly the facets you ask for, a capability server whose only parts to edit are its handler functions (handle_tool / handleTool, hook, prompt, command), and a README saying what to edit and how to test.

typescript (the default; -l ts) is src/server.ts, built by \`npm install && npm run build\` (tsc) and started by bin/<name>. python (-l py) is one executable file, bin/<name>: standard library only, no build. rust (-l rs) is a crate depending only on serde_json; build it into bin/ with the step the command prints.

With no --tool, --hook, --command, --prompt, --dynamic-prompt, --status or --skills, the package serves one sample tool named after it (on a terminal, new asks for the language and the tool's name first). The target directory must not exist or be empty. Details: docs/new.md.`;

  static override examples = [
    '<%= config.bin %> new weather',
    '<%= config.bin %> new clock -l py --tool now --tool zones',
    '<%= config.bin %> new guard --language python --hook pre_tool_use:bash',
    "<%= config.bin %> new deploy --command ship --prompt 'Use /deploy:ship to release.' --status",
    '<%= config.bin %> new tracker --language rust --tool issues --config endpoint --config token:secret:env=TRACKER_TOKEN --dir ~',
  ];

  static override args = {
    name: Args.string({
      ignoreStdin: true,
      required: true,
      description: 'Extension name (letters, digits, _ and -); also the directory and the server command.',
    }),
  };

  static override flags = {
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
  };

  async run(): Promise<ReturnType<typeof newJson>> {
    const { args, flags } = await this.parse(New);
    // `new` needs no Context (it touches no store): only its crash-test pause point.
    const checkpoint = cliCheckpoint();
    const asked = await askNewFacets(args.name, flags, !this.jsonEnabled());
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
        cwd: process.cwd(),
        ...(flags.dir !== undefined ? { dir: flags.dir } : {}),
        ...(process.env.HOME ? { home: process.env.HOME } : {}),
        ...(checkpoint ? { checkpoint } : {}),
      },
    );
    this.log(renderNew(result));
    return newJson(result);
  }
}

/** The result for --json: every key present, null (or false) when it does not apply (docs/json.md). */
function newJson(r: NewResult) {
  return {
    ...r,
    build: r.build ?? null,
    buildNeeds: r.buildNeeds ?? null,
    spec: {
      ...r.spec,
      prompt: r.spec.prompt ?? null,
      sampleTool: r.spec.sampleTool === true,
      config: r.spec.config.map((c) => ({ ...c, env: c.env ?? null, envDerived: c.envDerived === true })),
    },
  };
}
