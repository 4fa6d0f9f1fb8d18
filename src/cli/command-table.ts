/**
 * Every yep-ext command, by id (topic commands as `topic:command`, typed
 * `topic command`). The dispatcher (dispatch.ts) finds commands here, oclif's
 * help, manifest and completion read the same definitions (oclif-commands.ts),
 * and a new command is one file in src/commands plus one line here.
 */
import type { CommandDefinition } from './command.js';
import cacheClean from '../commands/cache/clean.js';
import cacheVerify from '../commands/cache/verify.js';
import completion from '../commands/completion.js';
import configSet from '../commands/config/set.js';
import configShow from '../commands/config/show.js';
import disable from '../commands/disable.js';
import doctor from '../commands/doctor.js';
import enable from '../commands/enable.js';
import help from '../commands/help.js';
import info from '../commands/info.js';
import install from '../commands/install.js';
import list from '../commands/list.js';
import lockExport from '../commands/lock/export.js';
import mirror from '../commands/mirror.js';
import newCommand from '../commands/new.js';
import outdated from '../commands/outdated.js';
import policyCheck from '../commands/policy/check.js';
import policyInit from '../commands/policy/init.js';
import remove from '../commands/remove.js';
import search from '../commands/search.js';
import setSecret from '../commands/set-secret.js';
import update from '../commands/update.js';
import verify from '../commands/verify.js';

export const COMMANDS: Readonly<Record<string, CommandDefinition>> = {
  'cache:clean': cacheClean,
  'cache:verify': cacheVerify,
  completion,
  'config:set': configSet,
  'config:show': configShow,
  disable,
  doctor,
  enable,
  help,
  info,
  install,
  list,
  'lock:export': lockExport,
  mirror,
  new: newCommand,
  outdated,
  'policy:check': policyCheck,
  'policy:init': policyInit,
  remove,
  search,
  'set-secret': setSecret,
  update,
  verify,
};

/** A command by id or alias (`rm` is remove), with its id; undefined when there is none. */
export function findCommand(id: string): { id: string; def: CommandDefinition } | undefined {
  if (Object.hasOwn(COMMANDS, id)) return { id, def: COMMANDS[id]! };
  for (const [cid, d] of Object.entries(COMMANDS)) if (d.aliases?.includes(id)) return { id: cid, def: d };
  return undefined;
}

/**
 * The topics: the first words of `topic:command` ids (`lock`, `cache`, `policy`, `config`).
 * What each holds is said in package.json (oclif.topics), which help reads.
 */
export function topicNames(): string[] {
  return [...new Set(Object.keys(COMMANDS).flatMap((id) => (id.includes(':') ? [id.split(':')[0]!] : [])))];
}

/** Every id and alias commands can be called by. */
export function callableIds(): string[] {
  return Object.entries(COMMANDS).flatMap(([id, d]) => [id, ...(d.aliases ?? [])]);
}
