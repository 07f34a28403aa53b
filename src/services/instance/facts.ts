import type { Ctx } from "../../context.ts";
import { vapidKeys } from "../push/vapid.ts";
import { translationProvider } from "../translation/provider.ts";
import { serializeAccount } from "../../entities/account.ts";
import type { InstanceFacts, InstanceStats } from "../../entities/instance.ts";
import { loadSettings } from "./settings.ts";
import { knownDomainCount, localStatusCount, localUserCount } from "./stats.ts";

/** Settings and the contact account, which both instance endpoints show. */
export async function loadInstanceFacts(ctx: Ctx): Promise<InstanceFacts> {
  const { values: settings } = await loadSettings(ctx.db.kysely);
  const username = settings.site_contact_username.toLowerCase();
  const contactRow = username
    ? await ctx.db.kysely
        .selectFrom("accounts")
        .selectAll()
        .where("domain", "is", null)
        .where((eb) => eb(eb.fn("lower", ["username"]), "=", username))
        .executeTakeFirst()
    : undefined;
  return {
    settings,
    contactAccount: contactRow ? await serializeAccount(ctx, contactRow) : null,
    vapidKey: (await vapidKeys(ctx)).publicKey,
    translationEnabled: translationProvider(ctx) !== undefined,
  };
}

export async function loadInstanceStats(ctx: Ctx): Promise<InstanceStats> {
  const [user_count, status_count, domain_count] = await Promise.all([
    localUserCount(ctx.db),
    localStatusCount(ctx.db),
    knownDomainCount(ctx.db),
  ]);
  return { user_count, status_count, domain_count };
}
