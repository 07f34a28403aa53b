/**
 * IP networks as IP blocks store them: CIDR with the host bits cleared (`192.0.2.7/24` is stored as
 * `192.0.2.0/24`, a bare address as `/32` or `/128`), the way Mastodon's `inet` column and IPAddr
 * keep them. Pure, so that tests and the CLI can use it without a database.
 */
import { BlockList, isIPv4, isIPv6 } from "node:net";

export interface Network {
  family: "ipv4" | "ipv6";
  /** The network address, host bits cleared, IPv6 in its shortest form. */
  address: string;
  prefix: number;
  /** `address/prefix`. */
  cidr: string;
}

function ipv4ToBigInt(address: string): bigint {
  return address.split(".").reduce((n, octet) => (n << 8n) | BigInt(Number(octet)), 0n);
}

function bigIntToIpv4(n: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((n >> shift) & 0xffn)).join(".");
}

/** The shortest form of an IPv6 address (WHATWG URL serializes it so), or undefined. */
function canonicalIpv6(address: string): string | undefined {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

function ipv6ToBigInt(canonical: string): bigint {
  const [head, tail] = canonical.includes("::") ? canonical.split("::") : [canonical, undefined];
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill("0"), ...right];
  return groups.reduce((n, group) => (n << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function bigIntToIpv6(n: bigint): string {
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((n >> shift) & 0xffffn).toString(16));
  return canonicalIpv6(groups.join(":"))!;
}

/** An IPv4 address written in IPv6 (`::ffff:192.0.2.1`, as dual-stack sockets report) as IPv4. */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? mapped[1]! : address;
}

/** `text` (an address, or an address and a prefix) as a network, or undefined when it is neither. */
export function parseNetwork(text: string): Network | undefined {
  const match = /^([^/\s]+)(?:\/(\d{1,3}))?$/.exec(text.trim());
  if (!match) return undefined;
  // A mapped IPv4 address alone is that IPv4 address; with a prefix it is an IPv6 network.
  const given = match[2] === undefined ? plainAddress(match[1]!) : match[1]!;
  if (isIPv4(given)) {
    const prefix = match[2] === undefined ? 32 : Number(match[2]);
    if (prefix > 32) return undefined;
    const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(32 - prefix);
    const address = bigIntToIpv4(ipv4ToBigInt(given) & mask);
    return { family: "ipv4", address, prefix, cidr: `${address}/${prefix}` };
  }
  const canonical = isIPv6(given) ? canonicalIpv6(given) : undefined;
  if (!canonical) return undefined;
  const prefix = match[2] === undefined ? 128 : Number(match[2]);
  if (prefix > 128) return undefined;
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(128 - prefix);
  const address = bigIntToIpv6(ipv6ToBigInt(canonical) & mask);
  return { family: "ipv6", address, prefix, cidr: `${address}/${prefix}` };
}

/** A set of networks that answers whether an address lies in one of them. */
export class NetworkSet {
  readonly #list = new BlockList();
  #size = 0;

  add(network: Network): void {
    this.#list.addSubnet(network.address, network.prefix, network.family);
    this.#size++;
  }

  get size(): number {
    return this.#size;
  }

  /** Whether `address` (IPv4, IPv6 or IPv4-mapped IPv6) lies in one of the networks. */
  has(address: string | undefined): boolean {
    if (this.#size === 0 || !address) return false;
    const plain = plainAddress(address);
    if (isIPv4(plain)) return this.#list.check(plain, "ipv4");
    return isIPv6(plain) && this.#list.check(plain, "ipv6");
  }
}
