import { defineCommand } from '../../cli/command.js';

export default defineCommand({
  summary: 'Check installed extensions against the policy file.',
  description: `Reads the system policy (YEP_EXT_POLICY, default /etc/yolop/yep-ext-policy.toml) and your <config>/yep-ext-policy.toml, which can only tighten it, and lists each installed extension that breaks a rule (source kind, index, git host, name, pin, binary digest kind, maximum grant). Exit status 13 (E_POLICY) when anything does; nothing is changed. See docs/policy.md.`,
  examples: ['<%= config.bin %> policy check', '<%= config.bin %> policy check --json'],
  async run(io) {
    const { checkPolicy } = await import('../../core/operations/policy.js');
    const result = await checkPolicy(io.context());
    if (!io.json) {
      io.log(
        result.files.length === 0
          ? `No policy file (${result.checked} extension${result.checked === 1 ? '' : 's'} installed): nothing to check.`
          : `${result.checked} extension${result.checked === 1 ? '' : 's'} admitted by ${result.files.join(' + ')}.`,
      );
    }
    return result;
  },
});
