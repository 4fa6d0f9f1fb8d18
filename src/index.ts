/**
 * yep-ext's programmatic API: the core operations and types, with no oclif import.
 * Build a Context with createContext({env, log}) and call the operations.
 */
export {
  createContext,
  normalizeIndexUrl,
  DEFAULT_INDEX_URL,
  type Context,
  type ContextOptions,
  type HttpSeam,
  type HttpSettings,
  type KeychainBackend,
  type Spawn,
  type GitFactory,
} from './core/context.js';
export { systemClock, type Clock } from './core/clock.js';
export { YepError, ERROR_CODES, isYepError, exitCodeFor, type ErrorCode } from './core/errors.js';
export { resolvePaths, type Paths } from './core/paths.js';
export { silentLogger, memoryLogger, startStep, withStep, type Logger, type Step, type StepState } from './core/log.js';
export { parseSpec, describeSpec, type Spec, type CrateSpec, type GitSpec, type PathSpec } from './core/sources/spec.js';
export { loadManifest, configFields, type Manifest, type ConfigField } from './core/package/manifest.js';
export { parseManifest, validateManifest } from './core/package/manifest-validate.js';
export { contentHash } from './core/package/content-hash.js';
export { loadLock, saveLock, parseLock, serializeLock, type Lockfile, type LockEntry, type LockSource } from './core/store/lockfile.js';
export {
  installSpec,
  installMany,
  planInstall,
  planMany,
  type InstallOutcome,
  type InstallPreview,
  type InstallHooks,
  type InstallPlan,
  type InstallAction,
} from './core/operations/install.js';
export { listExtensions, type ListedExtension } from './core/operations/list.js';
export { removeExtension, type RemoveOutcome } from './core/operations/remove.js';
export { updateExtensions, type UpdateItem, type UpdateOptions } from './core/operations/update.js';
export { grantOf, grantFingerprint, diffGrants, summarizeGrant, type Grant, type GrantDiff, type GrantChange } from './core/package/grants.js';
export {
  readExtensionSettings,
  enableExtension,
  disableExtension,
  setExtensionConfig,
  removeExtensionSettings,
  applySettingsEdit,
  readSettingsFromText,
  hostReading,
  type ExtensionSettings,
  type SettingsEdit,
} from './core/settings/settings.js';
export {
  getSecrets,
  setSecret,
  unsetSecret,
  removeExtensionSecrets,
  secretStatus,
  chooseSecretStore,
  type SecretStoreKind,
  type SecretStatus,
} from './core/settings/secrets.js';
export { Secret } from './core/settings/secret-value.js';
export { configStatus, missingFields, type FieldStatus, type FieldSource } from './core/settings/config-status.js';
export { runEnable, type EnableResult, type EnableOptions, type FieldPrompter } from './core/operations/enable.js';
export { runDisable, type DisableResult } from './core/operations/disable.js';
export { runSetSecret, type SetSecretResult, type SetSecretOptions } from './core/operations/set-secret.js';
export * from './core/yep/index.js';
export { runDoctor, parseDoctorTarget, type DoctorReport, type DoctorCheck, type DoctorOptions } from './core/doctor/doctor.js';
export { installFrozen, exportLock, type FrozenItem } from './core/operations/frozen.js';
export {
  checkEngines,
  enginesRequirement,
  describeVerdict,
  type EnginesVerdict,
  type EnginesStatus,
  type EnginesRequirement,
  type AgentVersion,
} from './core/agent/engines.js';
export { detectAgentVersion, checkAgainstAgent } from './core/agent/agent-version.js';
export { ENGINES_WALK_CAP, type EnginesReport, type SkippedCandidate } from './core/operations/agent-walk.js';
export { searchExtensions } from './core/operations/search.js';
export { checkPolicy, initPolicyFromLock, policyFromLock, type PolicyCheckResult, type PolicyInitResult } from './core/operations/policy.js';
export { loadPolicy, policyPaths } from './core/policy/load-policy.js';
export { parsePolicy, mergePolicy, type Policy, type PolicyLayer } from './core/policy/policy-file.js';
export { policyViolations, type PolicySubject, type PolicyViolation } from './core/policy/evaluate.js';
export type { CooldownOptions } from './core/sources/crates-io/cooldown-options.js';
export { fetchCrate, fetchCrateExact, resolveCrateVersion } from './core/sources/crates-io.js';
export { fetchGit, fetchGitCommit, resolveGitRef } from './core/sources/git.js';
export { runNew, type NewResult, type NewOptions } from './scaffold/run-new.js';
export { parseScaffoldRequest, LANGUAGES, DEFAULT_LANGUAGE, type ScaffoldSpec, type ScaffoldInput, type Language } from './scaffold/request.js';
export { renderScaffold, type ScaffoldFiles, type ScaffoldFile } from './scaffold/render.js';
export { buildStep, type BuildStep } from './scaffold/build-step.js';
export { writeScaffold } from './scaffold/write.js';
