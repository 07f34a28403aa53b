import { ApiError } from "../errors.ts";
import { UsageError, type Command } from "./command.ts";

/** The services, loaded when a command runs (not for --help). */
const services = async () => ({
  ...(await import("../services/admin/domain_allows.ts")),
  ...(await import("../entities/domain_allow.ts")),
});

/** Said on stderr while the list has no effect, so that an admin does not believe it protects anything. */
const MODE_OFF = "Note: LIMITED_FEDERATION_MODE is not true, so the allow-list has no effect until it is.";

/** The domain argument as the allow-list stores it, or a usage error. */
async function domainArgument(text: string): Promise<string> {
  const domain = (await services()).allowListDomain(text);
  if (!domain) throw new UsageError(`"${text}" is not a domain name`);
  return domain;
}

export const domainAllowsList: Command = {
  path: ["domain-allows", "list"],
  summary:
    "Lists the servers allowed to federate; the list matters only with LIMITED_FEDERATION_MODE=true, when no other server is.",
  usage: "domain-allows list [--json]",
  positionals: [0, 0],
  options: { json: { type: "boolean", description: "Print JSON (the admin API's entities)" } },
  async run(ctx, { values }, io) {
    const { allDomainAllows, serializeAdminDomainAllow } = await services();
    const rows = await allDomainAllows(ctx);
    if (values.json) io.out(JSON.stringify(rows.map(serializeAdminDomainAllow), null, 2));
    else for (const row of rows) io.out(row.domain);
    if (!ctx.config.limitedFederationMode) io.err(MODE_OFF);
    return 0;
  },
};

export const domainAllowsAdd: Command = {
  path: ["domain-allows", "add"],
  summary:
    "Allows DOMAIN to federate in limited federation mode: exactly that domain (not its subdomains), on any port.",
  usage: "domain-allows add DOMAIN",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const domain = await domainArgument(positionals[0]);
    const { allowDomain, domainAllowFor } = await services();
    if (await domainAllowFor(ctx, domain)) {
      io.out(`${domain} is already allowed`);
    } else {
      try {
        await allowDomain(ctx, domain);
      } catch (error) {
        if (error instanceof ApiError) throw new UsageError(error.message);
        throw error;
      }
      io.out(`Allowed ${domain}`);
    }
    if (!ctx.config.limitedFederationMode) io.err(MODE_OFF);
    return 0;
  },
};

export const domainAllowsRemove: Command = {
  path: ["domain-allows", "remove"],
  summary:
    "Takes DOMAIN off the allow-list. With LIMITED_FEDERATION_MODE=true its accounts are suspended at once and a job removes their posts and follows.",
  usage: "domain-allows remove DOMAIN",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const domain = await domainArgument(positionals[0]);
    const { domainAllowFor, unallowDomain } = await services();
    const existing = await domainAllowFor(ctx, domain);
    if (!existing) {
      io.err(`${domain} is not allowed`);
      return 1;
    }
    await unallowDomain(ctx, existing.id);
    io.out(
      ctx.config.limitedFederationMode
        ? `Removed ${domain}; its accounts are suspended and a job removes their posts and follows`
        : `Removed ${domain}`,
    );
    return 0;
  },
};
