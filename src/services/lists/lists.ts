/**
 * Lists: a user's named groups of accounts (Mastodon's List and ListAccount). Only accounts the
 * owner follows or has asked to follow can be members, and the owner themself; unfollowing an
 * account takes it off the owner's lists. At most 50 lists a user.
 */
import type { Ctx } from "../../context.ts";
import { removeFromList } from "../timelines/feeds.ts";
import { isIdLike, newId } from "../../db/ids.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { accountPageOf, accountsByIds, type AccountPage } from "../../db/queries/accounts.ts";
import type { AccountRow, ListRow } from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";

export const MAX_LISTS = 50;
export const TITLE_LIMIT = 256;
export const REPLIES_POLICIES = ["followed", "list", "none"] as const;

export interface ListParams {
  title?: string;
  repliesPolicy?: string;
  exclusive?: boolean;
}

function checkParams(params: ListParams, creating: boolean): string[] {
  const problems: string[] = [];
  if (params.title !== undefined || creating) {
    const title = params.title?.trim() ?? "";
    if (title === "") problems.push("Title can't be blank");
    else if ([...title].length > TITLE_LIMIT) problems.push(`Title is too long (maximum is ${TITLE_LIMIT} characters)`);
  }
  if (params.repliesPolicy !== undefined && !(REPLIES_POLICIES as readonly string[]).includes(params.repliesPolicy)) {
    problems.push("Replies policy is not included in the list");
  }
  return problems;
}

export async function ownLists(ctx: Ctx, owner: AccountRow): Promise<ListRow[]> {
  return ctx.db.kysely.selectFrom("lists").selectAll().where("account_id", "=", owner.id).orderBy("id").execute();
}

/** One of the owner's lists, or 404 (others' lists look missing). */
export async function ownList(ctx: Ctx, owner: AccountRow, id: string | undefined): Promise<ListRow> {
  const list =
    id && isIdLike(id)
      ? await ctx.db.kysely
          .selectFrom("lists")
          .selectAll()
          .where("id", "=", id)
          .where("account_id", "=", owner.id)
          .executeTakeFirst()
      : undefined;
  if (!list) throw new NotFound();
  return list;
}

export async function createList(ctx: Ctx, owner: AccountRow, params: ListParams): Promise<ListRow> {
  const problems = checkParams(params, true);
  if (problems.length) throw new ValidationFailed(problems);
  return ctx.db.kysely.transaction().execute(async (tx) => {
    const count = await tx
      .selectFrom("lists")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("account_id", "=", owner.id)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_LISTS) throw new ValidationFailed("You have reached the maximum number of lists");
    const now = new Date().toISOString();
    return tx
      .insertInto("lists")
      .values({
        id: newId(),
        account_id: owner.id,
        title: (params.title ?? "").trim(),
        replies_policy: params.repliesPolicy ?? "list",
        exclusive: params.exclusive ?? false,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
}

export async function updateList(ctx: Ctx, list: ListRow, params: ListParams): Promise<ListRow> {
  const problems = checkParams(params, false);
  if (problems.length) throw new ValidationFailed(problems);
  return ctx.db.kysely
    .updateTable("lists")
    .set({
      ...(params.title !== undefined ? { title: params.title.trim() } : {}),
      ...(params.repliesPolicy !== undefined ? { replies_policy: params.repliesPolicy } : {}),
      ...(params.exclusive !== undefined ? { exclusive: params.exclusive } : {}),
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", list.id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function deleteList(ctx: Ctx, list: ListRow): Promise<void> {
  await ctx.db.kysely.deleteFrom("lists").where("id", "=", list.id).execute();
}

/** A page of a list's members (all of them for "all"), paged by the membership rows' IDs. */
export async function listMembers(ctx: Ctx, list: ListRow, page: PageParams | "all"): Promise<AccountPage> {
  const query = ctx.db.kysely.selectFrom("list_accounts").select(["id", "account_id"]).where("list_id", "=", list.id);
  const rows = page === "all" ? await query.orderBy("id", "desc").execute() : await fetchPage(query, "id", page);
  return accountPageOf(ctx.db.kysely, rows, (r) => r.account_id);
}

/** Adds accounts to a list, all or none: each must exist (404) and be followed or requested (422). */
export async function addListMembers(ctx: Ctx, list: ListRow, accountIds: readonly string[]): Promise<void> {
  const ids = [...new Set(accountIds)];
  const accounts = await accountsByIds(ctx.db.kysely, ids);
  if (ids.length === 0 || accounts.length !== ids.length) throw new NotFound();
  await ctx.dispatcher.transaction(async (tx) => {
    const others = ids.filter((id) => id !== list.account_id);
    const related = others.length
      ? [
          ...(await tx
            .selectFrom("follows")
            .select("target_account_id as id")
            .where("account_id", "=", list.account_id)
            .where("target_account_id", "in", others)
            .execute()),
          ...(await tx
            .selectFrom("follow_requests")
            .select("target_account_id as id")
            .where("account_id", "=", list.account_id)
            .where("target_account_id", "in", others)
            .execute()),
        ]
      : [];
    const allowed = new Set(related.map((r) => r.id));
    if (others.some((id) => !allowed.has(id))) throw new ValidationFailed("Account must be a followed account");
    const existing = await tx
      .selectFrom("list_accounts")
      .select("account_id")
      .where("list_id", "=", list.id)
      .where("account_id", "in", ids)
      .execute();
    if (existing.length > 0) throw new ValidationFailed("Account has already been taken");
    const now = new Date().toISOString();
    await tx
      .insertInto("list_accounts")
      .values(ids.map((id) => ({ id: newId(), list_id: list.id, account_id: id, created_at: now })))
      .execute();
    await ctx.dispatcher.emit(tx, { type: "list.members_added", listId: list.id, accountIds: ids });
  });
}

export async function removeListMembers(ctx: Ctx, list: ListRow, accountIds: readonly string[]): Promise<void> {
  const ids = [...new Set(accountIds)].filter(isIdLike);
  if (ids.length === 0) return;
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx.deleteFrom("list_accounts").where("list_id", "=", list.id).where("account_id", "in", ids).execute();
    for (const id of ids) await removeFromList(tx, list.id, id);
  });
}

/** The owner's lists that contain `member` (GET /api/v1/accounts/:id/lists). */
export async function listsContaining(ctx: Ctx, owner: AccountRow, member: AccountRow): Promise<ListRow[]> {
  return ctx.db.kysely
    .selectFrom("lists")
    .innerJoin("list_accounts", "list_accounts.list_id", "lists.id")
    .selectAll("lists")
    .where("lists.account_id", "=", owner.id)
    .where("list_accounts.account_id", "=", member.id)
    .orderBy("lists.id")
    .execute();
}
