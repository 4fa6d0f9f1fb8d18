/**
 * The YEP v1 toolkit as one import for the programmatic API (src/index.ts):
 * the client, the protocol types and vocabulary, versions, framing and validation.
 */
export { YepClient, YepRequestError, RECORD_MESSAGE_MAX } from './client.js';
export type {
  YepClientOptions,
  RequestOptions,
  PendingCall,
  StopOptions,
  StopReport,
  LeftoverProcess,
  CancelOutcome,
  ExitInfo,
  MessageRecord,
  AskContext,
  RequestFailure,
} from './client.js';
export { buildServerEnv, type ServerLaunch } from './server-launch.js';
export * from './protocol.js';
export { parseProtocolVersion, checkCompatibility, type ProtocolVersion, type Compatibility } from './version.js';
export {
  LineSplitter,
  parseLine,
  classifyMessage,
  parseJsonSafely,
  encodeMessage,
  DEFAULT_MAX_LINE_BYTES,
  type Classified,
  type ParsedLine,
} from './framing.js';
export { decodeLenient, payloadProblems, errorProblems, schemaProblems } from './validate.js';
export { buildMeta, buildSchema, buildArtifacts, SCHEMA_DIR } from './schema-gen.js';
export { listGroup, isGroupAlive, signalGroup, waitGroupGone } from './process-group.js';
