import type { Ctx } from "../context.ts";
import type { AccountRow } from "../db/schema.ts";
import type { FeaturedTagFacts } from "../db/queries/tags.ts";

/** FeaturedTag: a hashtag on an account's profile, with the account's use of it. */
export interface FeaturedTag {
  id: string;
  name: string;
  url: string;
  statuses_count: number;
  last_status_at: string | null;
}

export function serializeFeaturedTag(ctx: Ctx, account: AccountRow, featured: FeaturedTagFacts): FeaturedTag {
  const name = featured.tag.name.toLowerCase();
  return {
    id: featured.id,
    name,
    url: `${ctx.config.baseUrl}/@${account.username}/tagged/${encodeURIComponent(name)}`,
    statuses_count: featured.statusesCount,
    last_status_at: featured.lastStatusAt,
  };
}
