/** What every entry point exports besides `Garblet`. */
export {
  AbortError,
  BusyError,
  CheatingDetected,
  ConnectionError,
  GarbletError,
  InputError,
  IntegrityError,
  ProtocolError,
  ServerError,
  type CheatingReason,
  type ConnectionErrorCode,
  type ErrorCode,
  type ErrorDetails,
  type InputErrorFields,
  type InputErrorReason,
  type IntegrityErrorReason,
} from './errors.js';
export { hex, Output, utf8 } from './encode.js';
export { SECURITY_MODES } from './options.js';
export { ASSET_FILES, type AssetIntegrity, type AssetName } from './integrity.js';
/** The SRI values of this build's own files, for `Garblet.connect(url, { integrity })`: see `dist/integrity.json`. */
export { integrity } from './integrity-values.js';
export { Session, type RunResult } from './session.js';
export type * from './types.js';
export * as apps from './apps.js';
export type { AppOptions, AppResult } from './apps.js';
