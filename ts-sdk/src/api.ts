/** What every entry point exports besides `Garblet`. */
export {
  AbortError,
  BusyError,
  ConnectionError,
  GarbletError,
  InputError,
  ProtocolError,
  ServerError,
  type ConnectionErrorCode,
  type ErrorCode,
  type ErrorDetails,
  type InputErrorFields,
  type InputErrorReason,
} from './errors.js';
export { hex, Output, utf8 } from './encode.js';
export { Session, type RunResult } from './session.js';
export type * from './types.js';
export * as apps from './apps.js';
export type { AppOptions, AppResult } from './apps.js';
