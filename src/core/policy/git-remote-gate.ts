/**
 * The git hosts policy on the URL git will really use. The user's and the system's git
 * config stay in force (credential helpers, `http.*` settings, and `url.<base>.insteadOf`,
 * which CI uses to add a token, as cargo's git does), so git may fetch from another URL
 * than the one yep-ext validated. When the policy restricts git hosts, that URL
 * (`ls-remote --get-url` applies every rewrite, includes and all) is a place the bytes
 * come from and must be admitted like the origin and a git mirror; the lock keeps the
 * origin. The git runner (sources/git-run.ts) reaches this through the Context
 * (`admitGitRemote`): sources sit below policy.
 */
import type { Context, GitRemoteAdmission } from '../context.js';
import { gitUrlHost, type GitUrl } from '../sources/git-url.js';
import type { OriginFacts } from '../sources/source.js';
import { redactUrls } from '../text/redact.js';
import { sanitize } from '../text/sanitize.js';
import { policyError, policyViolations } from './evaluate.js';
import { loadPolicy } from './load-policy.js';

/**
 * `spec`: the remote as the policy reads a spec (its kind and origin), from the git runner.
 * Returns whether git may follow an HTTP redirect: git follows one to any host (its
 * `http.followRedirects=initial`), so where the policy restricts git hosts the host a
 * redirect names would be a place the bytes come from that nothing ruled. yep-ext's own
 * HTTP client follows redirects within one host only; git cannot be told that, so under
 * `git_hosts` it follows none (the runner says so when a server answers with one).
 */
export async function admitRewrittenRemote(
  ctx: Context,
  remote: GitUrl,
  spec: { kind: string; origin: OriginFacts },
  effectiveUrl: () => Promise<string>,
): Promise<GitRemoteAdmission> {
  const policy = loadPolicy(ctx);
  if (policy.files.length === 0 || !policy.git_hosts) return { followRedirects: true };
  const shownRemote = sanitize(redactUrls(remote.url), { max: 200 });
  const effective = (await effectiveUrl()).trim();
  const pinned: GitRemoteAdmission = {
    followRedirects: false,
    url: effective === '' ? remote.url : effective,
    redirected: (status) =>
      policyError(
        [
          {
            rule: 'sources.git_hosts',
            item: 'redirect',
            message: `${shownRemote} answered with a redirect (HTTP ${status}), which git does not follow while the policy restricts git hosts: where it leads is a place the bytes would come from that the policy never saw`,
            file: policy.files.join(' + '),
          },
        ],
        policy,
      ),
  };
  if (effective === '' || effective === remote.url) return pinned;
  const shown = sanitize(redactUrls(effective), { max: 200 });
  const violations = policyViolations(policy, {
    name: sanitize(redactUrls(remote.url), { max: 200 }),
    spec,
    // A rewrite to a local path names no host: it is read in place, like a `file://` mirror.
    via: [{ git_host: gitUrlHost(effective) || 'file', through: `${shown} (your git config's url.<base>.insteadOf rewrites the URL to it)` }],
  }).filter((v) => v.rule === 'sources.git_hosts');
  if (violations.length > 0) throw policyError(violations, policy);
  return pinned;
}
