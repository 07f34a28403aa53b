import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import type { Ctx } from "../../context.ts";

const N = 16384;
const R = 8;
const P = 1;
const KEY_LENGTH = 64;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

/** Hashes a password with scrypt: `scrypt$N$r$p$salt$hash` (base64url parts). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, { N, r: R, p: P });
  return `scrypt$${N}$${R}$${P}$${salt.toString("base64url")}$${key.toString("base64url")}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  if (!stored) return false;
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64url");
  const key = await derive(password, Buffer.from(salt, "base64url"), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** A random password for accounts created without one (printed once by the CLI). */
export function generatePassword(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * Sets a new password (already checked by the caller) and signs out every other browser session
 * of the user; the session `keepSessionId` stays signed in.
 */
export async function changePassword(ctx: Ctx, userId: string, password: string, keepSessionId: string): Promise<void> {
  const encrypted = await hashPassword(password);
  const now = new Date().toISOString();
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .updateTable("users")
      .set({ encrypted_password: encrypted, updated_at: now })
      .where("id", "=", userId)
      .execute();
    await tx.deleteFrom("web_sessions").where("user_id", "=", userId).where("id", "!=", keepSessionId).execute();
  });
}
