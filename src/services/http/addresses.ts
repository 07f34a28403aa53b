/**
 * Which IP addresses outbound fetches may connect to: the public internet, plus whatever
 * ALLOWED_PRIVATE_ADDRESSES lists (config.allowedPrivateAddresses) — never loopback, private,
 * link-local, unique-local, CGNAT, multicast, unspecified, documentation or translation ranges
 * otherwise, nor IPv4-mapped forms of them.
 */
import { BlockList, isIP } from "node:net";

// Addresses no outbound fetch may reach unless ALLOWED_PRIVATE_ADDRESSES lists them. BlockList also
// matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against the IPv4 ranges.
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"; 0.0.0.0 reaches the local host
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata services
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 96], // unspecified, loopback and the deprecated IPv4-compatible form
  // 64:ff9b::/96 (NAT64) is judged by the IPv4 address it carries: an IPv6-only host behind DNS64
  // reaches every public IPv4 server through it, and private ones must stay refused.
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32], // Teredo
  ["2001:10::", 28],
  ["2001:20::", 28],
  ["2001:db8::", 32],
  ["2002::", 16], // 6to4
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv6");
}

const allowLists = new WeakMap<readonly string[], BlockList>();

function allowListOf(entries: readonly string[]): BlockList {
  let list = allowLists.get(entries);
  if (!list) {
    list = new BlockList();
    for (const entry of entries) {
      const [address, bits] = entry.split("/");
      const family = isIP(address) === 6 ? "ipv6" : "ipv4";
      if (bits === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(bits), family);
    }
    allowLists.set(entries, list);
  }
  return list;
}

function familyOf(address: string): "ipv4" | "ipv6" {
  return isIP(address) === 6 ? "ipv6" : "ipv4";
}

const NAT64 = new BlockList();
NAT64.addSubnet("64:ff9b::", 96, "ipv6");

/** The IPv4 address a NAT64 address (64:ff9b::/96) carries in its last 32 bits. */
function embeddedIpv4(address: string): string {
  const groups = new URL(`http://[${address}]/`).hostname.slice(1, -1).split(":");
  const [high, low] = groups.slice(-2).map((g) => Number.parseInt(g || "0", 16));
  return [high! >> 8, high! & 255, low! >> 8, low! & 255].join(".");
}

/** Whether an IP address is private, loopback, link-local, multicast or otherwise not on the public internet. */
export function isNonPublicAddress(address: string): boolean {
  const family = familyOf(address);
  if (family === "ipv6" && NAT64.check(address, "ipv6")) return FORBIDDEN.check(embeddedIpv4(address), "ipv4");
  return FORBIDDEN.check(address, family);
}

/** Whether outbound fetches may connect to `address` under this configuration. */
export function isReachableAddress(address: string, allowedPrivateAddresses: readonly string[]): boolean {
  if (!isIP(address)) return false;
  if (!isNonPublicAddress(address)) return true;
  return allowListOf(allowedPrivateAddresses).check(address, familyOf(address));
}
