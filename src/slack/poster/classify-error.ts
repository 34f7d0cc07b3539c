import { webApi } from '@slack/bolt';

const { ErrorCode } = webApi;

/**
 * What the poster does about a failed Web API call: wait for Retry-After, back off and try again,
 * try once more with a smaller payload, or give up (Slack will not accept it however often we ask).
 */
export type CallFailure =
  | { kind: 'rate_limited'; retryAfterSeconds: number; error: string }
  | { kind: 'transient'; error: string }
  | { kind: 'too_big'; error: string }
  | { kind: 'permanent'; error: string };

/** Slack errors that say "try later" rather than "this request is wrong". */
const TRANSIENT_PLATFORM_ERRORS = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited', 'rate_limited']);

/** Errors a smaller message (text only, shorter) can fix. */
const SIZE_ERRORS = new Set(['msg_too_long', 'invalid_blocks', 'invalid_blocks_format', 'invalid_attachments', 'too_many_attachments']);

interface CodedLike {
  code?: string;
  retryAfter?: number;
  statusCode?: number;
  data?: { error?: string };
  message?: string;
}

export function classifyCallError(error: unknown): CallFailure {
  const e = (error ?? {}) as CodedLike;
  switch (e.code) {
    case ErrorCode.RateLimitedError:
      return { kind: 'rate_limited', retryAfterSeconds: Math.max(0, Number(e.retryAfter ?? 1)), error: 'rate_limited' };
    case ErrorCode.PlatformError: {
      const code = e.data?.error ?? 'unknown_error';
      if (TRANSIENT_PLATFORM_ERRORS.has(code)) return { kind: 'transient', error: code };
      if (SIZE_ERRORS.has(code)) return { kind: 'too_big', error: code };
      return { kind: 'permanent', error: code };
    }
    case ErrorCode.RequestError:
      return { kind: 'transient', error: `request_failed: ${e.message ?? ''}`.trim() };
    case ErrorCode.HTTPError:
      return (e.statusCode ?? 500) >= 500 ? { kind: 'transient', error: `http_${e.statusCode}` } : { kind: 'permanent', error: `http_${e.statusCode}` };
    case ErrorCode.FileUploadInvalidArgumentsError:
    case ErrorCode.FileUploadReadFileDataError:
      return { kind: 'permanent', error: e.data?.error ?? e.message ?? 'file_upload_invalid' };
    default:
      // The upload step of files v2 throws plain errors; a network blip there is worth one more try.
      return { kind: 'transient', error: e.message ?? String(error) };
  }
}
