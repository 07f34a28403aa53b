import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import type { AccountRow, UserRow } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { isUniqueViolation } from "../../db/errors.ts";
import { hashPassword } from "./passwords.ts";
import { describeDetails, validateNewUser } from "./validation.ts";

const generateKeyPairAsync = promisify(generateKeyPair);

export interface CreateLocalUserParams {
  username: string;
  email: string;
  password: string;
  roleId?: string | null;
  confirmed?: boolean;
  approved?: boolean;
  locale?: string | null;
  reason?: string | null;
  signUpIp?: string | null;
  createdByApplicationId?: string | null;
  /** Only the CLI may hand out administrative names. */
  allowReserved?: boolean;
}

export interface LocalUser {
  account: AccountRow;
  user: UserRow;
}

/** The ActivityPub identifiers of a local account, derived from its username. */
export function localAccountUris(baseUrl: string, username: string) {
  const uri = `${baseUrl}/users/${username}`;
  return {
    uri,
    url: `${baseUrl}/@${username}`,
    inbox_url: `${uri}/inbox`,
    outbox_url: `${uri}/outbox`,
    followers_url: `${uri}/followers`,
    following_url: `${uri}/following`,
    featured_url: `${uri}/collections/featured`,
    shared_inbox_url: `${baseUrl}/inbox`,
  };
}

/**
 * Creates a local account and its user (with the account's signing key pair) in one transaction.
 * Throws ValidationFailed, with `details` per parameter, when the input is not acceptable.
 */
export async function createLocalUser(ctx: Ctx, params: CreateLocalUserParams): Promise<LocalUser> {
  const username = params.username.trim();
  const email = params.email.trim();
  const details = await validateNewUser(
    ctx.db.kysely,
    { username, email, password: params.password },
    { allowReserved: params.allowReserved ?? false },
  );
  if (Object.keys(details).length > 0) throw new ValidationFailed(describeDetails(details), { details });

  const [keys, encryptedPassword] = await Promise.all([
    generateKeyPairAsync("rsa", {
      modulusLength: 2048,
      publicKeyEncoding: { type: "spki", format: "pem" },
      privateKeyEncoding: { type: "pkcs8", format: "pem" },
    }),
    hashPassword(params.password),
  ]);
  const now = new Date().toISOString();
  try {
    return await insertUser(ctx, params, { username, email, keys, encryptedPassword, now });
  } catch (error) {
    // Someone took the name or address between the check and the insert: answer as the check would.
    if (!isUniqueViolation(error)) throw error;
    const raced = await validateNewUser(
      ctx.db.kysely,
      { username, email, password: params.password },
      { allowReserved: true },
    );
    throw new ValidationFailed(describeDetails(raced), { details: raced });
  }
}

async function insertUser(
  ctx: Ctx,
  params: CreateLocalUserParams,
  values: {
    username: string;
    email: string;
    keys: { publicKey: string; privateKey: string };
    encryptedPassword: string;
    now: string;
  },
): Promise<LocalUser> {
  const { username, email, keys, encryptedPassword, now } = values;
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const account = await tx
      .insertInto("accounts")
      .values({
        id: newId(),
        username,
        domain: null,
        ...localAccountUris(ctx.config.baseUrl, username),
        public_key: keys.publicKey,
        private_key: keys.privateKey,
        discoverable: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const user = await tx
      .insertInto("users")
      .values({
        id: newId(),
        account_id: account.id,
        email,
        encrypted_password: encryptedPassword,
        role_id: params.roleId ?? null,
        confirmed_at: params.confirmed ? now : null,
        approved: params.approved ?? true,
        locale: params.locale ?? null,
        reason: params.reason ?? null,
        sign_up_ip: params.signUpIp ?? null,
        created_by_application_id: params.createdByApplicationId ?? null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { account, user };
  });
}

/** Finds a local user by username (case-insensitive). */
export async function findLocalUser(ctx: Ctx, username: string): Promise<LocalUser | undefined> {
  const account = await ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("domain", "is", null)
    .where((eb) => eb(eb.fn("lower", ["username"]), "=", username.trim().toLowerCase()))
    .executeTakeFirst();
  if (!account) return undefined;
  const user = await ctx.db.kysely
    .selectFrom("users")
    .selectAll()
    .where("account_id", "=", account.id)
    .executeTakeFirst();
  return user ? { account, user } : undefined;
}
