import { BaseCommand } from '../../cli/base-command.js';
import { checkPolicy } from '../../core/operations/policy.js';

export default class PolicyCheck extends BaseCommand {
  static override summary = "Check every installed extension against the administrator's policy file.";
  static override description =
    `Reads the system policy (YEP_EXT_POLICY, default /etc/yolop/yep-ext-policy.toml) and your <config>/yep-ext-policy.toml, which can only tighten it, and lists each installed extension that breaks a rule (source kind, index, git host, name, pin, binary digest kind, maximum grant). Exit status 13 (E_POLICY) when anything does; nothing is changed. See docs/policy.md.`;
  static override examples = ['<%= config.bin %> policy check', '<%= config.bin %> policy check --json'];

  async run(): Promise<unknown> {
    await this.parse(PolicyCheck);
    const result = await checkPolicy(this.makeContext());
    if (!this.jsonEnabled()) {
      this.log(
        result.files.length === 0
          ? `No policy file (${result.checked} extension${result.checked === 1 ? '' : 's'} installed): nothing to check.`
          : `${result.checked} extension${result.checked === 1 ? '' : 's'} admitted by ${result.files.join(' + ')}.`,
      );
    }
    return result;
  }
}
