import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";

/** Mastodon's registration error codes (`ERR_` + the Rails error symbol). */
export type ErrorCode =
  | "ERR_BLOCKED"
  | "ERR_UNREACHABLE"
  | "ERR_TAKEN"
  | "ERR_RESERVED"
  | "ERR_ACCEPTED"
  | "ERR_BLANK"
  | "ERR_INVALID"
  | "ERR_TOO_LONG"
  | "ERR_TOO_SHORT"
  | "ERR_INCLUSION";

export interface FieldError {
  error: ErrorCode;
  description: string;
}

/** Errors per parameter, the `details` object of a 422 registration response. */
export type ErrorDetails = Record<string, FieldError[]>;

export const USERNAME_MAX = 30;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;
const USERNAME_PATTERN = /^[a-z0-9_]+([.-]+[a-z0-9_]+)*$/i;
const LOCAL_USERNAME_PATTERN = /^[a-z0-9_]+$/i;
/** local@host; the host may be a single label (admin@localhost), reachability is checked separately. */
export const EMAIL_PATTERN = /^[^\s@<>()[\]\\,;:"]+@[\p{L}\p{N}](?:[\p{L}\p{N}.-]*[\p{L}\p{N}])?$/u;

/** Names that only the CLI may give out (Mastodon reserves administrative names on sign-up). */
export const RESERVED_USERNAMES = new Set([
  "admin",
  "administrator",
  "support",
  "help",
  "root",
  "webmaster",
  "mod",
  "moderator",
  "postmaster",
  "hostmaster",
  "abuse",
  "security",
  "noreply",
  "no-reply",
  "instance",
  "actor",
  "system",
  "rookery",
]);

export function isValidUsernameShape(username: string): boolean {
  return USERNAME_PATTERN.test(username);
}

function add(details: ErrorDetails, field: string, error: ErrorCode, description: string): void {
  (details[field] ??= []).push({ error, description });
}

export interface NewUserInput {
  username: string;
  email: string;
  password: string;
}

/** Checks the parts of a new local user that every path shares (sign-up and CLI). */
export async function validateNewUser(
  db: Kysely<Database>,
  input: NewUserInput,
  options: { allowReserved: boolean },
): Promise<ErrorDetails> {
  const details: ErrorDetails = {};
  const username = input.username.trim();
  const email = input.email.trim();

  if (username === "") add(details, "username", "ERR_BLANK", "can't be blank");
  else {
    if (!LOCAL_USERNAME_PATTERN.test(username))
      add(details, "username", "ERR_INVALID", "must contain only letters, numbers and underscores");
    if (username.length > USERNAME_MAX)
      add(details, "username", "ERR_TOO_LONG", `is too long (maximum is ${USERNAME_MAX} characters)`);
    if (!options.allowReserved && RESERVED_USERNAMES.has(username.toLowerCase()))
      add(details, "username", "ERR_RESERVED", "is reserved");
    if (!details.username) {
      const taken = await db
        .selectFrom("accounts")
        .select("id")
        .where("domain", "is", null)
        .where((eb) => eb(eb.fn("lower", ["username"]), "=", username.toLowerCase()))
        .executeTakeFirst();
      if (taken) add(details, "username", "ERR_TAKEN", "is already taken");
    }
  }

  if (email === "") add(details, "email", "ERR_BLANK", "can't be blank");
  else if (!EMAIL_PATTERN.test(email) || email.length > 320) add(details, "email", "ERR_INVALID", "is invalid");
  else {
    const taken = await db
      .selectFrom("users")
      .select("id")
      .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
      .executeTakeFirst();
    if (taken) add(details, "email", "ERR_TAKEN", "is already taken");
  }

  if (input.password === "") add(details, "password", "ERR_BLANK", "can't be blank");
  else if ([...input.password].length < PASSWORD_MIN)
    add(details, "password", "ERR_TOO_SHORT", `is too short (minimum is ${PASSWORD_MIN} characters)`);
  else if ([...input.password].length > PASSWORD_MAX)
    add(details, "password", "ERR_TOO_LONG", `is too long (maximum is ${PASSWORD_MAX} characters)`);
  return details;
}

const LABELS: Record<string, string> = {
  username: "Username",
  email: "E-mail",
  password: "Password",
  agreement: "Agreement",
  locale: "Locale",
  reason: "Reason",
  date_of_birth: "Date of birth",
};

/** `Username is already taken, Password is too short …`: the text of a 422 for these details. */
export function describeDetails(details: ErrorDetails): string[] {
  return Object.entries(details).flatMap(([field, errors]) =>
    errors.map((e) => `${LABELS[field] ?? field} ${e.description}`),
  );
}
