import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializePushSubscription } from "../../entities/push_subscription.ts";
import { NotFound, ParameterMissing } from "../../errors.ts";
import {
  subscribe,
  subscriptionOf,
  unsubscribe,
  updateSubscription,
  type SubscriptionParams,
} from "../../services/push/subscriptions.ts";
import { vapidKeys } from "../../services/push/vapid.ts";
import { userOf } from "../auth.ts";
import { toBoolean, toObject, toStringParam, type ParamObject } from "../params.ts";
import { updateRoute } from "../update_route.ts";

/** `data[alerts][<type>]` and `data[policy]`. */
function alertsAndPolicy(input: ParamObject): Pick<SubscriptionParams, "alerts" | "policy"> {
  const data = toObject(input.data) ?? {};
  const given = toObject(data.alerts) ?? {};
  const alerts: Record<string, boolean> = {};
  for (const [type, value] of Object.entries(given)) {
    const flag = toBoolean(value);
    if (flag !== undefined) alerts[type] = flag;
  }
  return { alerts, policy: toStringParam(data.policy) };
}

/** Web Push subscriptions of the calling token (scope `push`). */
export default async function pushRoutes(app: FastifyInstance, ctx: Ctx) {
  const push = app.auth({ scopes: ["push"], user: true });
  const render = async (row: Parameters<typeof serializePushSubscription>[0]) =>
    serializePushSubscription(row, (await vapidKeys(ctx)).publicKey);
  const token = (req: FastifyRequest) => userOf(req).tokenId;

  app.post("/api/v1/push/subscription", { preHandler: push }, async (req) => {
    const subscription = toObject(req.input.subscription);
    if (!subscription) throw new ParameterMissing("subscription");
    const keys = toObject(subscription.keys) ?? {};
    const row = await subscribe(ctx, token(req), userOf(req).user.id, {
      endpoint: toStringParam(subscription.endpoint),
      p256dh: toStringParam(keys.p256dh),
      auth: toStringParam(keys.auth),
      standard: toBoolean(subscription.standard),
      ...alertsAndPolicy(req.input),
    });
    return render(row);
  });

  app.get("/api/v1/push/subscription", { preHandler: push }, async (req) => {
    const row = await subscriptionOf(ctx, token(req));
    if (!row) throw new NotFound("Not Found");
    return render(row);
  });

  updateRoute(app, "/api/v1/push/subscription", { preHandler: push }, async (req) =>
    render(await updateSubscription(ctx, token(req), alertsAndPolicy(req.input))),
  );

  app.delete("/api/v1/push/subscription", { preHandler: push }, async (req) => {
    await unsubscribe(ctx, token(req));
    return {};
  });
}
