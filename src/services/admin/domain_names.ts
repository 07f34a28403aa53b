/**
 * Domain names as server blocks store them, and the block severities; free of the database so
 * that the CLI's help can show them without loading it.
 */
import { domainToASCII } from "node:url";
import type { DomainBlockSeverity } from "../../db/schema.ts";

export const SEVERITIES: readonly DomainBlockSeverity[] = ["silence", "suspend", "noop"];
const DOMAIN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A domain as blocks store it: trimmed, lowercase, punycode; undefined when it is not a domain. */
export function normalizeDomain(text: string): string | undefined {
  const ascii = domainToASCII(
    text
      .trim()
      .replace(/^\.+|\.+$/g, "")
      .toLowerCase(),
  );
  return ascii && DOMAIN.test(ascii) ? ascii : undefined;
}
