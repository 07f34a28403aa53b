/**
 * A local account's Ed25519 key pair (FEP-8b32: object integrity proofs on what it sends, listed as
 * its `assertionMethod`), made on first use and stored once even when two processes race.
 */
import { generateKeyPairSync } from "node:crypto";
import type { Ctx } from "../../context.ts";

export interface Ed25519Pem {
  privateKey: string;
  publicKey: string;
}

export async function ed25519KeysOf(ctx: Ctx, accountId: string): Promise<Ed25519Pem> {
  const read = () =>
    ctx.db.kysely
      .selectFrom("account_keys")
      .select(["ed25519_private_key", "ed25519_public_key"])
      .where("account_id", "=", accountId)
      .executeTakeFirst();
  let row = await read();
  if (!row) {
    const pair = generateKeyPairSync("ed25519");
    await ctx.db.kysely
      .insertInto("account_keys")
      .values({
        account_id: accountId,
        ed25519_private_key: pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
        ed25519_public_key: pair.publicKey.export({ type: "spki", format: "pem" }).toString(),
        created_at: new Date().toISOString(),
      })
      .onConflict((oc) => oc.column("account_id").doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error(`the Ed25519 key of account ${accountId} could not be stored`);
  }
  return { privateKey: row.ed25519_private_key, publicKey: row.ed25519_public_key };
}
