// The tamper-evident audit chain every service writes its audit records to (docs/audit.md).
export { canonicalJson, hashOf, GENESIS_HASH, CHAIN_VERSION, type AuditEntry, type ChainedRecord, type Json } from './canonical.ts';
export {
  appendAudit,
  chainHead,
  listRecords,
  listRecordsAbout,
  readRecords,
  type AuditInput,
  type AuditedWrite,
  type Appended,
  type ChainHead,
} from './chain.ts';
export { checkpointSigned, latestCheckpoint, signCheckpoint, type Checkpoint } from './checkpoint.ts';
export { exportChain, recordLine } from './export.ts';
export { pruneChain, RetentionRefused } from './retention.ts';
export { auditHeadRoutes } from './routes.ts';
export { createHeadSigner, openHeadSigner, type HeadSigner } from './head-signer.ts';
export { headKey, HEADS_PREFIX, signHead, type SignedHead } from './heads.ts';
export { headSigningKeys, loadAuditKeys, loadHeadSettings, type AuditKeys, type HeadSettings } from './settings.ts';
export { verifyChain, type Finding, type VerifyOptions, type VerifyResult } from './verify.ts';
