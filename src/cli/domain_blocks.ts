import { ApiError } from "../errors.ts";
import { normalizeDomain, SEVERITIES } from "../services/admin/domain_names.ts";
import { UsageError, type Command } from "./command.ts";

/** The services, loaded when a command runs (not for --help). */
const services = async () => ({
  ...(await import("../services/admin/domain_blocks.ts")),
  ...(await import("../entities/domain_block.ts")),
});

/** The API's errors (a domain already covered, a bad value) as one line for the admin. */
async function asUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(error.message);
    throw error;
  }
}

export const domainBlocksList: Command = {
  path: ["domain-blocks", "list"],
  summary: "Lists the blocked servers with their severity and settings.",
  usage: "domain-blocks list [--json]",
  positionals: [0, 0],
  options: { json: { type: "boolean", description: "Print JSON (the admin API's entities)" } },
  async run(ctx, { values }, io) {
    const { serializeAdminDomainBlock } = await services();
    const rows = await ctx.db.kysely.selectFrom("domain_blocks").selectAll().orderBy("domain").execute();
    if (values.json) {
      io.out(JSON.stringify(rows.map(serializeAdminDomainBlock), null, 2));
      return 0;
    }
    for (const row of rows) {
      const flags = [
        row.reject_media && "reject-media",
        row.reject_reports && "reject-reports",
        row.obfuscate && "obfuscate",
      ]
        .filter(Boolean)
        .join(",");
      io.out(`${row.domain}\t${row.severity}${flags ? `\t${flags}` : ""}`);
    }
    return 0;
  },
};

const blockOptions = {
  severity: { type: "string", description: `${SEVERITIES.join(", ")} (default: silence)` },
  "reject-media": { type: "boolean", description: "Do not store media from the server" },
  "reject-reports": { type: "boolean", description: "Ignore reports from the server" },
  "private-comment": { type: "string", description: "A note for moderators" },
  "public-comment": { type: "string", description: "A reason that may be shown publicly" },
  obfuscate: { type: "boolean", description: "Partly star the domain in the public list" },
} as const;

export const domainBlocksAdd: Command = {
  path: ["domain-blocks", "add"],
  summary: "Blocks DOMAIN and its subdomains (or changes an existing block of DOMAIN).",
  usage: "domain-blocks add DOMAIN [--severity silence|suspend|noop] [options]",
  positionals: [1, 1],
  options: blockOptions,
  async run(ctx, { positionals, values }, io) {
    const domain = normalizeDomain(positionals[0]);
    if (!domain) throw new UsageError(`"${positionals[0]}" is not a domain name`);
    const severity = values.severity as string | undefined;
    if (severity !== undefined && !(SEVERITIES as readonly string[]).includes(severity))
      throw new UsageError(`--severity must be one of ${SEVERITIES.join(", ")}`);
    const params = {
      severity,
      rejectMedia: values["reject-media"] as boolean | undefined,
      rejectReports: values["reject-reports"] as boolean | undefined,
      privateComment: values["private-comment"] as string | undefined,
      publicComment: values["public-comment"] as string | undefined,
      obfuscate: values.obfuscate as boolean | undefined,
    };
    const { blockFor, createDomainBlock, serializeAdminDomainBlock, updateDomainBlock } = await services();
    const existing = await blockFor(ctx.db.kysely, domain);
    if (existing?.domain === domain) {
      const updated = await asUsage(() => updateDomainBlock(ctx, existing.id, params));
      io.out(`Updated the block of ${updated.domain} (${updated.severity})`);
      return 0;
    }
    const block = await asUsage(() => createDomainBlock(ctx, { domain, ...params }, serializeAdminDomainBlock));
    io.out(`Blocked ${block.domain} (${block.severity})`);
    return 0;
  },
};

export const domainBlocksRemove: Command = {
  path: ["domain-blocks", "remove"],
  summary: "Lifts the block of DOMAIN; its accounts are no longer suspended or silenced by it.",
  usage: "domain-blocks remove DOMAIN",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const domain = normalizeDomain(positionals[0]);
    if (!domain) throw new UsageError(`"${positionals[0]}" is not a domain name`);
    const { blockFor, removeDomainBlock } = await services();
    const existing = await blockFor(ctx.db.kysely, domain);
    if (existing?.domain !== domain) {
      io.err(`${domain} is not blocked${existing ? ` (the block of ${existing.domain} covers it)` : ""}`);
      return 1;
    }
    await removeDomainBlock(ctx, existing.id);
    io.out(`Unblocked ${domain}`);
    return 0;
  },
};
