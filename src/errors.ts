/**
 * Typed errors that services and routes throw; api/errors.ts turns each into Mastodon's JSON body
 * `{"error": message, ...extra}` with its status. Services never build HTTP responses themselves.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly extra: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, message: string, extra?: Record<string, unknown>, headers?: Record<string, string>) {
    super(message);
    this.status = status;
    this.extra = extra;
    this.headers = headers;
  }
}

export class BadRequest extends ApiError {
  constructor(message = "Bad Request", extra?: Record<string, unknown>) {
    super(400, message, extra);
  }
}

/** A required parameter is missing (Rails' ParameterMissing). */
export class ParameterMissing extends BadRequest {
  constructor(name: string) {
    super(`param is missing or the value is empty or invalid: ${name}`);
  }
}

export class Unauthorized extends ApiError {
  constructor(message = "The access token is invalid") {
    super(401, message, undefined, {
      "WWW-Authenticate": `Bearer realm="Doorkeeper", error="invalid_token", error_description="${message}"`,
    });
  }
}

/** The instance requires a signed-in user for otherwise public API endpoints. */
export class AuthenticationRequired extends ApiError {
  constructor() {
    super(401, "This API requires an authenticated user");
  }
}

export class Forbidden extends ApiError {
  constructor(message = "This action is not allowed") {
    super(403, message);
  }
}

export class OutsideScopes extends Forbidden {
  constructor() {
    super("This action is outside the authorized scopes");
  }
}

/** A record lookup failed. */
export class NotFound extends ApiError {
  constructor(message = "Record not found") {
    super(404, message);
  }
}

/** The record existed and is gone for good (a deleted account). */
export class Gone extends ApiError {
  constructor(message = "Gone") {
    super(410, message);
  }
}

export class Conflict extends ApiError {
  constructor(message = "Conflict during update, please try again") {
    super(409, message);
  }
}

export class PayloadTooLarge extends ApiError {
  constructor(message = "Request body is too large") {
    super(413, message);
  }
}

export class UnsupportedMediaType extends ApiError {
  constructor(message = "Unsupported content type") {
    super(415, message);
  }
}

/** 422 with a message of its own (no "Validation failed:" prefix). */
export class Unprocessable extends ApiError {
  constructor(message: string, extra?: Record<string, unknown>) {
    super(422, message, extra);
  }
}

/** 422 `Validation failed: reason, reason`. */
export class ValidationFailed extends Unprocessable {
  readonly reasons: string[];
  constructor(reasons: string | string[], extra?: Record<string, unknown>) {
    const list = Array.isArray(reasons) ? reasons : [reasons];
    super(`Validation failed: ${list.join(", ")}`, extra);
    this.reasons = list;
  }
}

/** An app token was used where a user is needed. */
export class UserRequired extends Unprocessable {
  constructor() {
    super("This method requires an authenticated user");
  }
}

export class TooManyRequests extends ApiError {
  constructor(headers?: Record<string, string>) {
    super(429, "Too many requests", undefined, headers);
  }
}

/** 503; with `retryAfterSeconds`, a `Retry-After` header says when to try again. */
export class ServiceUnavailable extends ApiError {
  constructor(message = "Service Unavailable", retryAfterSeconds?: number) {
    super(
      503,
      message,
      undefined,
      retryAfterSeconds === undefined ? undefined : { "Retry-After": String(retryAfterSeconds) },
    );
  }
}
