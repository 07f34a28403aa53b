/**
 * Stopping the reads of requests whose client has gone. Each HTTP request runs in a scope that
 * holds an AbortSignal, fired when the client hangs up before the answer is sent; the database
 * layer refuses to start another SELECT in an aborted scope, so an abandoned timeline page stops
 * after the query in flight instead of running its dozen serializer queries for nobody. Writes
 * are never refused (a write a client asked for is finished or rolled back by its transaction),
 * and work outside a request (jobs, the CLI) has no scope and is never stopped.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";

const requestScope = new AsyncLocalStorage<AbortSignal>();

/** The client of the current request went away; nothing is left to answer. */
export class ClientGone extends Error {
  override name = "ClientGone";
  constructor() {
    super("The client closed the connection");
  }
}

/** Runs `work` (and everything it starts) in a scope stopped by `signal`. */
export function runInRequestScope<T>(signal: AbortSignal, work: () => T): T {
  return requestScope.run(signal, work);
}

/** Throws ClientGone when the current request's client has gone. */
export function throwIfClientGone(): void {
  if (requestScope.getStore()?.aborted) throw new ClientGone();
}

/** The Kysely plugin that checks before every SELECT. */
export class StopReadsForGoneClients implements KyselyPlugin {
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (args.node.kind === "SelectQueryNode") throwIfClientGone();
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/** Runs `work` outside any request's scope: work for other clients (a stream's events) is never stopped by this one leaving. */
export function outsideRequestScope<T>(work: () => T): T {
  return requestScope.exit(work);
}
