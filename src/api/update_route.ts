import type {
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteHandlerMethod,
  RouteShorthandOptions,
} from "fastify";

/**
 * Registers an update route for PUT and PATCH alike. Mastodon declares its update routes as Rails
 * resources, which answer both methods, and clients use either: masto.js PUTs the notification
 * policy that the documentation PATCHes. `PATCH /api/v1/accounts/update_credentials` is no
 * resource in Mastodon and stays PATCH only (test/api/methods.test.ts checks the pairs).
 */
export function updateRoute<Route extends RouteGenericInterface = RouteGenericInterface>(
  app: FastifyInstance,
  url: string,
  options: RouteShorthandOptions<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Route>,
  handler: RouteHandlerMethod<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, Route>,
): void {
  app.route<Route>({ method: ["PUT", "PATCH"], url, ...options, handler });
}
