import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";

/**
 * Deletes a status and the boosts of it, keeping every counter right: the authors' statuses
 * counts and the parent's replies count. Its media are detached (not destroyed) so the client can
 * redraft with them; unattached media are cleaned up later.
 */
export async function deleteStatus(ctx: Ctx, status: StatusRow): Promise<void> {
  await ctx.db.kysely.transaction().execute(async (tx) => {
    const boosts = await tx.selectFrom("statuses").select(["id", "account_id", "visibility"]).where("reblog_of_id", "=", status.id).execute();
    const removed = [status, ...boosts];
    const perAccount = new Map<string, number>();
    for (const s of removed) if (s.visibility !== "direct") perAccount.set(s.account_id, (perAccount.get(s.account_id) ?? 0) + 1);
    for (const [accountId, n] of perAccount) {
      await tx.updateTable("accounts").set((eb) => ({ statuses_count: eb("statuses_count", "-", n) })).where("id", "=", accountId).where("statuses_count", ">=", n).execute();
    }
    if (status.reblog_of_id) {
      await tx.updateTable("statuses").set((eb) => ({ reblogs_count: eb("reblogs_count", "-", 1) })).where("id", "=", status.reblog_of_id).where("reblogs_count", ">", 0).execute();
    }
    if (status.in_reply_to_id && (status.visibility === "public" || status.visibility === "unlisted")) {
      await tx.updateTable("statuses").set((eb) => ({ replies_count: eb("replies_count", "-", 1) })).where("id", "=", status.in_reply_to_id).where("replies_count", ">", 0).execute();
    }
    await tx.updateTable("media_attachments").set({ status_id: null, updated_at: new Date().toISOString() }).where("status_id", "=", status.id).execute();
    await tx.deleteFrom("polls").where("status_id", "=", status.id).execute();
    await tx.deleteFrom("statuses").where("id", "in", removed.map((s) => s.id)).execute();
  });
}
