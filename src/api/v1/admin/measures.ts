import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeCohort, serializeDimension, serializeMeasure } from "../../../entities/admin_dashboard.ts";
import { DIMENSION_KEYS, dimensions } from "../../../services/admin/dimensions.ts";
import { MEASURE_KEYS, measures } from "../../../services/admin/measures.ts";
import { periodOf, type Period } from "../../../services/admin/metrics_period.ts";
import { retention } from "../../../services/admin/retention.ts";
import { ParameterMissing } from "../../../errors.ts";
import { toLimit, toObject, toStringArray, toStringParam, toTime, type ParamObject } from "../../params.ts";

/** `start_at` … `end_at` (dates or times; their whole UTC days). Missing or unreadable is 400. */
function periodParams(input: ParamObject): Period {
  const start = toTime(input.start_at);
  if (!start) throw new ParameterMissing("start_at");
  const end = toTime(input.end_at);
  if (!end) throw new ParameterMissing("end_at");
  return periodOf(start, end);
}

/** The nested parameters of each key that takes some (`tag_uses[id]`, `instance_accounts[domain]`). */
function keyParams(input: ParamObject, keys: readonly string[]): Record<string, { id?: string; domain?: string }> {
  const params: Record<string, { id?: string; domain?: string }> = {};
  for (const key of keys) {
    const object = toObject(input[key]);
    if (object) params[key] = { id: toStringParam(object.id)?.trim(), domain: toStringParam(object.domain) };
  }
  return params;
}

/**
 * The dashboard's numbers (Mastodon's Api::V1::Admin::MeasuresController, DimensionsController,
 * RetentionController): View Dashboard and `admin:read`. Unknown keys are left out of the answer;
 * a key that needs a parameter and lacks it is 400; an unknown hashtag is 404.
 */
export default async function adminMeasureRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read"], permission: "view_dashboard" });

  app.post("/api/v1/admin/measures", { preHandler: read }, async (req) => {
    const period = periodParams(req.input);
    const keys = toStringArray(req.input.keys);
    const rows = await measures(ctx, keys, period, keyParams(req.input, MEASURE_KEYS));
    return rows.map(serializeMeasure);
  });
  app.post("/api/v1/admin/dimensions", { preHandler: read }, async (req) => {
    const period = periodParams(req.input);
    const keys = toStringArray(req.input.keys);
    const limit = toLimit(req.input.limit, 10, 100);
    const rows = await dimensions(ctx, keys, period, limit, keyParams(req.input, DIMENSION_KEYS));
    return rows.map(serializeDimension);
  });
  app.post("/api/v1/admin/retention", { preHandler: read }, async (req) => {
    const period = periodParams(req.input);
    // Mastodon reads anything but `month` as `day`.
    const frequency = toStringParam(req.input.frequency) === "month" ? "month" : "day";
    return (await retention(ctx, period, frequency)).map(serializeCohort);
  });
}
