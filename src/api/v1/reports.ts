import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeReports } from "../../entities/report.ts";
import { createReport } from "../../services/reports/reports.ts";
import { userOf } from "../auth.ts";
import { toBoolean, toId, toStringArray, toStringParam } from "../params.ts";

/** Reporting an account to the moderators. */
export default async function reportRoutes(app: FastifyInstance, ctx: Ctx) {
  app.post(
    "/api/v1/reports",
    { preHandler: app.auth({ scopes: ["write:reports"], user: true }), config: { throttles: ["reports"] } },
    async (req) => {
      const reporter = userOf(req).account;
      const report = await createReport(ctx, reporter, {
        accountId: toId(req.input.account_id),
        statusIds: toStringArray(req.input.status_ids).flatMap((id) => toId(id) ?? []),
        comment: toStringParam(req.input.comment),
        category: toStringParam(req.input.category) || undefined,
        ruleIds: toStringArray(req.input.rule_ids),
        forward: toBoolean(req.input.forward) === true,
        forwardToDomains: toStringArray(req.input.forward_to_domains),
      });
      return (await serializeReports(ctx, [report]))[0];
    },
  );
}
