import { Resolver, promises as dns } from "node:dns";

/** Tells whether an e-mail domain can receive mail (has MX, A or AAAA records). */
export interface MailDomainChecker {
  /** true: reachable; false: definitely not; the check never throws. */
  canReceiveMail(domain: string): Promise<boolean>;
  /**
   * The host names of the domain's mail servers (its MX records), [] when it has none or DNS
   * fails; never throws. Absent where DNS is not asked (EMAIL_DOMAIN_DNS_CHECK=false, loopback):
   * e-mail domain blocks then cover no mail servers.
   */
  mailServers?(domain: string): Promise<string[]>;
}

const NOT_FOUND = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"]);

/** Checks real DNS with a short timeout. Failures of the resolver itself count as reachable. */
export function dnsMailDomainChecker(timeoutMs = 3000): MailDomainChecker {
  return {
    async canReceiveMail(domain) {
      const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
      const query = async (fn: () => Promise<unknown[]>): Promise<"yes" | "no" | "unknown"> => {
        try {
          return (await fn()).length > 0 ? "yes" : "no";
        } catch (error) {
          return NOT_FOUND.has((error as NodeJS.ErrnoException).code ?? "") ? "no" : "unknown";
        }
      };
      const answers = await Promise.all([
        query(
          () => new Promise((resolve, reject) => resolver.resolveMx(domain, (e, r) => (e ? reject(e) : resolve(r)))),
        ),
        query(
          () => new Promise((resolve, reject) => resolver.resolve4(domain, (e, r) => (e ? reject(e) : resolve(r)))),
        ),
        query(
          () => new Promise((resolve, reject) => resolver.resolve6(domain, (e, r) => (e ? reject(e) : resolve(r)))),
        ),
        // The hosts file counts too (admin@localhost on a development machine).
        query(async () => [await dns.lookup(domain)]),
      ]);
      if (answers.includes("yes")) return true;
      return answers.includes("unknown");
    },
    async mailServers(domain) {
      const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
      return new Promise((resolve) =>
        resolver.resolveMx(domain, (error, records) =>
          resolve(
            error
              ? []
              : [
                  ...new Set(
                    records.map((r) => r.exchange.toLowerCase().replace(/\.$/, "")).filter((host) => host !== ""),
                  ),
                ],
          ),
        ),
      );
    },
  };
}

/** For servers without outside DNS (EMAIL_DOMAIN_DNS_CHECK=false): every domain is accepted. */
export const acceptAllMailDomains: MailDomainChecker = { canReceiveMail: async () => true };
