/** Errors of the statuses use cases that callers tell apart (all map to Mastodon's answers). */
import type { AccountRow } from "../../db/schema.ts";
import { NotFound, Unprocessable } from "../../errors.ts";

/** The status replied to does not exist, is not visible to the author, is a boost, or was not an ID. */
export class ReplyTargetNotFound extends NotFound {
  constructor() {
    super("The post you are trying to reply to does not appear to exist.");
  }
}

/** The scheduled status was published (or cancelled) by someone else first. */
export class AlreadyPublished extends Error {
  override name = "AlreadyPublished";
}

/**
 * The post would mention accounts outside `allowed_mentions` (Mastodon's mention safeguard).
 * The HTTP edge renders `accounts` as `unexpected_accounts`.
 */
export class UnexpectedMentions extends Unprocessable {
  readonly accounts: AccountRow[];
  constructor(accounts: AccountRow[]) {
    super("Post would be sent to unexpected accounts");
    this.accounts = accounts;
  }
}
