import { newId } from "../db/ids.ts";
import { UsageError, type Command } from "./command.ts";

const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function domainArgument(text: string): string {
  const domain = text.trim().toLowerCase().replace(/^@/, "");
  if (!DOMAIN.test(domain)) throw new UsageError(`"${text}" is not a domain name`);
  return domain;
}

export const emailDomainBlocksList: Command = {
  path: ["email-domain-blocks", "list"],
  summary: "Lists the e-mail domains that may not sign up.",
  usage: "email-domain-blocks list",
  positionals: [0, 0],
  options: {},
  async run(ctx, _args, io) {
    const rows = await ctx.db.kysely.selectFrom("email_domain_blocks").select("domain").orderBy("domain").execute();
    for (const row of rows) io.out(row.domain);
    return 0;
  },
};

export const emailDomainBlocksAdd: Command = {
  path: ["email-domain-blocks", "add"],
  summary: "Refuses sign-ups with e-mail addresses at DOMAIN and its subdomains.",
  usage: "email-domain-blocks add DOMAIN",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const domain = domainArgument(positionals[0]);
    await ctx.db.kysely
      .insertInto("email_domain_blocks")
      .values({ id: newId(), domain, created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column("domain").doNothing())
      .execute();
    io.out(`Blocked ${domain}`);
    return 0;
  },
};

export const emailDomainBlocksRemove: Command = {
  path: ["email-domain-blocks", "remove"],
  summary: "Allows sign-ups from DOMAIN again.",
  usage: "email-domain-blocks remove DOMAIN",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const domain = domainArgument(positionals[0]);
    const result = await ctx.db.kysely
      .deleteFrom("email_domain_blocks")
      .where("domain", "=", domain)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) {
      io.err(`${domain} is not blocked`);
      return 1;
    }
    io.out(`Unblocked ${domain}`);
    return 0;
  },
};
