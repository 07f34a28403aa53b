/**
 * A report of a remote account that its reporter asked to forward goes to that account's server
 * as a Flag from the instance actor (the reporter stays anonymous there), with the comment and
 * the reported posts, as Mastodon sends it.
 */
import { randomUUID } from "node:crypto";
import { Flag } from "@fedify/vocab";
import type { Ctx } from "../../context.ts";
import type { DomainEvent } from "../../events/types.ts";
import { reportForForwarding } from "../../services/reports/reports.ts";
import { fedContext, send } from "./send.ts";
import { INSTANCE_ACTOR } from "../instance_actor.ts";

export async function deliverReport(ctx: Ctx, event: DomainEvent<"report.created">): Promise<void> {
  const found = await reportForForwarding(ctx, event.reportId);
  if (!found) return;
  const { report, target, statusUris } = found;
  const flag = new Flag({
    id: new URL(`${ctx.config.baseUrl}/${randomUUID()}`),
    actor: fedContext(ctx).getActorUri(INSTANCE_ACTOR),
    content: report.comment,
    objects: [new URL(target.uri), ...statusUris.map((uri) => new URL(uri))],
  });
  await send(ctx, "instance", [target], flag, { shared: true });
}
