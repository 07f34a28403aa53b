/**
 * Which statuses a home or list feed takes (Mastodon's FeedManager#filter_from_home and
 * #filter_from_list), written once as SQL conditions so that the fan-out on write (one recipient
 * expression over many followers), the merge of a newly followed account and the read-time
 * fallback for older pages all apply the same rules. The status is the row `alias` of
 * `statuses`; the recipient is any SQL expression of an account ID.
 *
 * Every existence test is a per-row probe on a unique or leading index (`LIMIT 1 OFFSET 0`, see
 * test/db/plans.test.ts), so a batch of followers costs a few index lookups each.
 */
import { sql, type RawBuilder, type SqlBool } from "kysely";
import { notHiddenFrom } from "../visibility/exclusions.ts";

type Expr = RawBuilder<unknown>;

/** A boost is left out when its original or another boost of it is among the feed's newest this many. */
export const BOOST_WINDOW = 80;

/** A stored feed: the home feed of an account or the feed of a list. */
export type FeedTable = "home_feed_entries" | "list_feed_entries";

export function feedOwnerColumn(table: FeedTable): "account_id" | "list_id" {
  return table === "home_feed_entries" ? "account_id" : "list_id";
}

function column(alias: string, name: string): Expr {
  return sql.ref(`${alias}.${name}`);
}

/**
 * The status (a boost) repeats something already among the newest `BOOST_WINDOW` entries of the
 * feed `owner` of `table`: its original, or another boost of it.
 */
export function recentDuplicate(table: FeedTable, owner: Expr, groupId: Expr): RawBuilder<SqlBool> {
  const t = sql.table(table);
  const ownerColumn = sql.raw(feedOwnerColumn(table));
  return sql<SqlBool>`EXISTS (SELECT 1 FROM ${t} dup WHERE dup.${ownerColumn} = ${owner} AND dup.group_id = ${groupId}
    AND dup.status_id >= COALESCE((SELECT w.status_id FROM ${t} w WHERE w.${ownerColumn} = ${owner}
      ORDER BY w.status_id DESC LIMIT 1 OFFSET ${sql.lit(BOOST_WINDOW - 1)}), 0) LIMIT 1 OFFSET 0)`;
}

export interface HomeRuleOptions {
  /** Leave out boosts already near the top of this feed (the fan-out; not the read-time fallback). */
  dedupe?: { table: FeedTable; owner: Expr };
  /** Apply exclusive lists (home feeds only). */
  exclusiveLists: boolean;
  /** The time mutes expire against: now by default (a prepared statement passes its slot). */
  now?: unknown;
}

/**
 * The status `alias` belongs in the home feed of `recipient`, who follows its author (or its
 * hashtag), as Mastodon decides:
 * - followers-only and public posts go to followers; a direct post only to those it mentions;
 * - nothing from an account hidden from the recipient (blocked either way, muted, domain-blocked),
 *   nor a post mentioning an account the recipient blocks or mutes;
 * - a reply to someone else only when the recipient follows them or is the one replied to;
 * - a boost only when the recipient shows the booster's boosts, the boosted author is not hidden
 *   either, and it does not repeat what the feed shows near its top;
 * - an original post only in the languages the recipient follows the author in;
 * - not from a member of one of the recipient's exclusive lists.
 */
export function homeRules(recipient: Expr, alias: string, options: HomeRuleOptions): RawBuilder<SqlBool> {
  const s = (name: string) => column(alias, name);
  const at = options.now ?? new Date().toISOString();
  const conditions: RawBuilder<SqlBool>[] = [
    sql<SqlBool>`(${s("visibility")} IN ('public', 'unlisted', 'private') OR ${s("account_id")} = ${recipient}
      OR EXISTS (SELECT 1 FROM mentions vm WHERE vm.status_id = ${s("id")} AND vm.account_id = ${recipient} LIMIT 1 OFFSET 0))`,
    notHiddenFrom(recipient, s("account_id"), at),
    sql<SqlBool>`NOT EXISTS (SELECT 1 FROM mentions hm WHERE hm.status_id = ${s("id")} AND (
      EXISTS (SELECT 1 FROM blocks hb WHERE hb.account_id = ${recipient} AND hb.target_account_id = hm.account_id LIMIT 1 OFFSET 0)
      OR EXISTS (SELECT 1 FROM mutes hu WHERE hu.account_id = ${recipient} AND hu.target_account_id = hm.account_id
        AND (hu.expires_at IS NULL OR hu.expires_at > ${at}) LIMIT 1 OFFSET 0)) LIMIT 1 OFFSET 0)`,
    sql<SqlBool>`(${s("reblog_of_id")} IS NOT NULL OR ${s("in_reply_to_account_id")} IS NULL
      OR ${s("in_reply_to_account_id")} = ${s("account_id")} OR ${s("in_reply_to_account_id")} = ${recipient}
      OR EXISTS (SELECT 1 FROM follows rf WHERE rf.account_id = ${recipient} AND rf.target_account_id = ${s("in_reply_to_account_id")} LIMIT 1 OFFSET 0))`,
    sql<SqlBool>`(${s("reblog_of_id")} IS NULL OR (
      NOT EXISTS (SELECT 1 FROM follows sr WHERE sr.account_id = ${recipient} AND sr.target_account_id = ${s("account_id")}
        AND sr.show_reblogs = ${false} LIMIT 1 OFFSET 0)
      AND EXISTS (SELECT 1 FROM statuses boosted WHERE boosted.id = ${s("reblog_of_id")}
        AND ${notHiddenFrom(recipient, sql.ref("boosted.account_id"), at)} LIMIT 1 OFFSET 0)
      ${options.dedupe ? sql`AND NOT ${recentDuplicate(options.dedupe.table, options.dedupe.owner, s("reblog_of_id"))}` : sql``}))`,
    sql<SqlBool>`(${s("reblog_of_id")} IS NOT NULL OR ${s("language")} IS NULL
      OR NOT EXISTS (SELECT 1 FROM follows lf WHERE lf.account_id = ${recipient} AND lf.target_account_id = ${s("account_id")}
        AND lf.languages IS NOT NULL AND lf.languages NOT LIKE '%"' || ${s("language")} || '"%' LIMIT 1 OFFSET 0))`,
  ];
  if (options.exclusiveLists)
    conditions.push(sql<SqlBool>`NOT EXISTS (SELECT 1 FROM list_accounts xa JOIN lists xl ON xl.id = xa.list_id
      WHERE xa.account_id = ${s("account_id")} AND xl.account_id = ${recipient} AND xl.exclusive = ${true} LIMIT 1 OFFSET 0)`);
  return sql<SqlBool>`(${sql.join(conditions, sql` AND `)})`;
}

/** A list as SQL: the columns of a joined row (the fan-out), or values (one list's pages). */
export interface ListExpr {
  id: Expr;
  accountId: Expr;
  repliesPolicy: Expr;
}

/** The list joined as `alias`. */
export function listColumns(alias: string): ListExpr {
  return {
    id: column(alias, "id"),
    accountId: column(alias, "account_id"),
    repliesPolicy: column(alias, "replies_policy"),
  };
}

/**
 * The list takes the status `alias` by its replies policy: a reply to someone else only with
 * `followed` (the home rule already asks that the owner follows them), with `list` when they are
 * on the list, and always when it replies to the list's owner. Direct posts never go to lists.
 */
export function listRules(list: ListExpr, alias: string): RawBuilder<SqlBool> {
  const s = (name: string) => column(alias, name);
  return sql<SqlBool>`(${s("visibility")} <> 'direct' AND (${s("reblog_of_id")} IS NOT NULL
    OR ${s("in_reply_to_account_id")} IS NULL OR ${s("in_reply_to_account_id")} = ${s("account_id")}
    OR ${s("in_reply_to_account_id")} = ${list.accountId} OR ${list.repliesPolicy} = 'followed'
    OR (${list.repliesPolicy} = 'list' AND EXISTS (SELECT 1 FROM list_accounts lr WHERE lr.list_id = ${list.id}
      AND lr.account_id = ${s("in_reply_to_account_id")} LIMIT 1 OFFSET 0))))`;
}

/**
 * Read time: the author of the status `alias` is not suspended, and for a boost, the boosted status
 * is live, by an unsuspended account not hidden from `viewer`. With the fan-out's rules this is
 * every visibility rule a stored feed entry needs (statuses/visibility.ts for the others).
 */
export function stillShown(viewer: string, alias: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`(NOT EXISTS (SELECT 1 FROM accounts gone WHERE gone.id = ${column(alias, "account_id")}
      AND gone.suspended_at IS NOT NULL LIMIT 1 OFFSET 0)
    AND (${column(alias, "reblog_of_id")} IS NULL OR EXISTS (SELECT 1 FROM statuses boosted
      JOIN accounts boosted_author ON boosted_author.id = boosted.account_id
      WHERE boosted.id = ${column(alias, "reblog_of_id")} AND boosted.deleted_at IS NULL
        AND boosted_author.suspended_at IS NULL AND ${notHiddenFrom(viewer, sql.ref("boosted.account_id"))} LIMIT 1 OFFSET 0)))`;
}
