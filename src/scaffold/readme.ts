/**
 * The package's README.md (what to edit, how to build and test) and the starter
 * skills/<name>/SKILL.md. Both are written for the extension's author, who may be
 * yolop itself: short, concrete, and every command copy-pasteable.
 */
import { joinParts } from './facets.js';
import { buildStep } from './build-step.js';
import type { Language, ScaffoldSpec } from './request.js';

/** Where the server source lives, per language (relative to the package). */
export function serverSourcePath(spec: ScaffoldSpec): string {
  if (spec.language === 'rust') return 'src/main.rs';
  return spec.language === 'typescript' ? 'src/server.ts' : `bin/${spec.name}`;
}

const LANGUAGE_LABEL: Record<Language, string> = {
  typescript: 'TypeScript template: src/server.ts, compiled by tsc, no runtime dependencies',
  python: 'Python template: Python 3.8+, standard library only, no build',
  rust: 'Rust template: a crate depending only on serde_json',
};

interface Names {
  tool: string;
  hook: string;
  prompt: string;
  command: string;
  status: string;
  text: string;
  allow: string;
  block: string;
  commandResult: string;
  log: string;
}

function handlerNames(language: Language): Names {
  if (language === 'typescript') {
    return {
      tool: 'handleTool',
      hook: 'handleHook',
      prompt: 'handlePrompt',
      command: 'handleCommand',
      status: 'setStatus',
      text: 'textResult',
      allow: 'allow()',
      block: "block('why')",
      commandResult: "commandResult('done')",
      log: '`log()` or `console.log()` (this file sends console output to stderr)',
    };
  }
  if (language === 'python') {
    return {
      tool: 'handle_tool',
      hook: 'handle_hook',
      prompt: 'handle_prompt',
      command: 'handle_command',
      status: 'set_status',
      text: 'text_result',
      allow: 'allow()',
      block: 'block("why")',
      commandResult: 'command_result("done")',
      log: '`log()` or `print()` (this file sends print() to stderr)',
    };
  }
  return {
    tool: 'handle_tool',
    hook: 'handle_hook',
    prompt: 'handle_prompt',
    command: 'handle_command',
    status: 'set_status',
    text: 'text_result',
    allow: 'Ok(allow())',
    block: 'Ok(block("why", None))',
    commandResult: 'Ok(command_result("done", true))',
    log: '`log()` or `eprintln!` (never `println!`)',
  };
}

function list(items: readonly string[]): string {
  return items.map((i) => `\`${i}\``).join(', ');
}

/** A path argument as the user should type it for yep-ext (a bare word would be a crate name). */
function dirArg(name: string): string {
  return `./${name}`;
}

/** The test commands with their comments aligned. */
function testCommands(spec: ScaffoldSpec): string[] {
  const rows: [string, string][] = [
    [`yep-ext doctor ${dirArg(spec.name)}`, 'start the server as yolop would and check every facet'],
    ...(spec.tools.length > 0
      ? [[`yep-ext doctor ${dirArg(spec.name)} --call ${spec.tools[0]} --args '{"input": "hi"}'`, 'also call a tool'] as [string, string]]
      : []),
    [`yep-ext install ${dirArg(spec.name)}`, 'install it (a local directory is used in place)'],
    [`yep-ext enable ${spec.name}`, 'turn it on for yolop (asks for required config)'],
    [`yep-ext doctor ${spec.name}`, 'the installed extension, with its configured values'],
  ];
  const width = Math.max(...rows.map(([c]) => c.length));
  return rows.map(([c, why]) => `${c.padEnd(width)}  # ${why}`);
}

export function renderReadme(spec: ScaffoldSpec): string {
  const n = handlerNames(spec.language);
  const source = serverSourcePath(spec);
  const rust = spec.language === 'rust';
  const build = buildStep(spec);
  const secrets = spec.config.filter((f) => f.secret);
  const plain = spec.config.filter((f) => !f.secret);
  const readConfig = rust ? 'config_value("key")' : spec.language === 'python' ? 'CONFIG.get("key")' : "config['key']";
  const readEnv = rust ? 'std::env::var("NAME")' : spec.language === 'python' ? 'os.environ.get("NAME")' : "process.env['NAME']";

  const files = joinParts([
    '| file | what it is |',
    '|---|---|',
    '| `plugin.json` | the manifest: what the extension contributes, read by yolop and yep-ext |',
    rust &&
      `| \`Cargo.toml\`, \`src/main.rs\` | the server's source |\n| \`bin/${spec.name}\` | the built server, after the build step below (yolop runs this) |`,
    spec.language === 'typescript' &&
      `| \`src/server.ts\` | the server's source: your handlers go here |\n| \`package.json\`, \`tsconfig.json\` | the build (\`npm run build\`: tsc writes \`dist/server.js\`) |\n| \`bin/${spec.name}\` | the launcher yolop runs: it starts \`dist/server.js\` |`,
    spec.language === 'python' && `| \`bin/${spec.name}\` | the server: one executable file (yolop runs this) |`,
    spec.skills && `| \`skills/${spec.name}/SKILL.md\` | a skill the agent can load |`,
    '| `README.md` | this file |',
  ]);

  const edits = joinParts([
    spec.tools.length > 0 &&
      `- **Tools** (${list(spec.tools)}): fill in \`${n.tool}\`. Return \`${n.text}("...")\` or any JSON value; fail the call with ${rust ? '`Err("why".into())`' : 'an exception'}; stream progress with \`progress("...")\`. In \`plugin.json\`, give each tool a \`description\` and an argument \`schema\`: the model reads both. To add a tool, add it to \`tools\` in \`plugin.json\` **and** to \`TOOLS\` in the server (doctor fails a served tool the manifest does not declare).`,
    spec.hooks.length > 0 &&
      `- **Hooks** (${spec.hooks.map((h) => `\`${h.event}\` on \`${h.glob}\``).join(', ')}): fill in \`${n.hook}\`. It sees every matching tool call, from any extension. Return \`${n.allow}\` to let it run or \`${n.block}\` to stop it (pre_tool_use only). \`timeout_ms\` and \`on_error\` (\`warn\` lets the call through when the hook fails or is slow, \`block\` stops it) are in \`plugin.json\`.`,
    spec.prompt !== undefined && `- **Prompt**: the static system-prompt text is \`PROMPT\` in \`${source}\`, sent once when the server starts.`,
    spec.dynamicPrompt && `- **Dynamic prompt**: fill in \`${n.prompt}\`; yolop asks for the text every turn. An empty string adds nothing.`,
    spec.commands.length > 0 &&
      `- **Commands** (${spec.commands.map((c) => `\`/${spec.name}:${c}\``).join(', ')}): fill in \`${n.command}\` and return \`${n.commandResult}\`; the message is shown to the user. Declare arguments under \`args\` in \`plugin.json\` so the user sees them.`,
    spec.status &&
      `- **Status**: call \`${n.status}("text", "warn")\` whenever the status-bar text should change (\`ok\`, \`warn\`, \`error\`; an empty text clears it). The server says "ready" after the handshake.`,
    spec.skills &&
      `- **Skills**: write the skill in \`skills/${spec.name}/SKILL.md\` (its front matter \`description\` tells the agent when to load it); add more as \`skills/<skill>/SKILL.md\`.`,
    spec.config.length > 0 &&
      joinParts([
        `- **Config** (${list(spec.config.map((f) => f.key))}): declared in \`config_schema\` in \`plugin.json\` (add a \`description\`, a \`type\`, and list a field in \`required\` once the extension cannot work without it).`,
        plain.length > 0 &&
          `  Non-secret values arrive in the handshake and on \`config/changed\`: read them with \`${readConfig}\`${plain.some((f) => f.env) ? '; a field with `env` is also in that environment variable' : ''}. The user sets them with \`yep-ext enable ${spec.name} --config ${plain[0]!.key}=VALUE\`.`,
        secrets.length > 0 &&
          `  Secrets never reach the server except as environment variables: ${secrets.map((f) => `\`${f.key}\` in \`$${f.env}\``).join(', ')} (read with \`${readEnv}\`). The user stores one with \`yep-ext set-secret ${spec.name} ${secrets[0]!.key}\`.`,
      ]),
  ]);

  return `${joinParts([
    `# ${spec.name}`,
    '',
    `TODO: one paragraph saying what the ${spec.name} extension does for yolop.`,
    '',
    `Generated by \`yep-ext new\` (${LANGUAGE_LABEL[spec.language]}). \`plugin.json\` declares what the extension contributes; \`bin/${spec.name}\` is its capability server, which yolop starts (with \`bin/\` first on \`PATH\`, from the workspace root) and talks to over YEP v1: one JSON object per line on stdin and stdout.`,
    '',
    '## What is here',
    '',
    files,
    '',
    build !== undefined &&
      joinParts([
        '## Build',
        '',
        'From this directory, after every change to the source:',
        '',
        '```sh',
        build.command,
        '```',
        '',
        `It needs ${build.needs}`,
        '',
        rust
          ? `yolop runs \`bin/${spec.name}\`, never the source, so an unbuilt change does nothing.`
          : `yolop runs \`bin/${spec.name}\`, which starts the compiled \`dist/server.js\`: an unbuilt change does nothing.`,
        '',
      ]),
    '## What to edit',
    '',
    `The server is complete as generated: it answers every YEP v1 request and passes \`yep-ext doctor\`. Your code goes in the handlers in the **YOUR CODE** section of \`${source}\`; the protocol code after it should not need changes. Search for \`TODO\` to find every placeholder, including the descriptions in \`plugin.json\`.`,
    '',
    edits,
    '',
    `stdout carries the protocol, so nothing else may be written there: log with ${n.log}.`,
    '',
    '## Test',
    '',
    '```sh',
    ...testCommands(spec),
    '```',
    '',
    `Run these from the directory that contains this package (or give its path). An enabled extension is started by yolop's next session.`,
  ])}\n`;
}

export function renderSkill(spec: ScaffoldSpec): string {
  return `---
name: "${spec.name}"
description: "TODO: one sentence saying when the agent should use this skill."
---

# ${spec.name}

TODO: the instructions the agent follows when this skill applies: what to do,
in which order, with which of ${spec.name}'s tools or commands, and what to avoid.
`;
}
