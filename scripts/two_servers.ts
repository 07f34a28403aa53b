/**
 * Two Rookery servers that federate with each other on this machine, for trying federation by
 * hand: `https://a.test:PORT` and `https://b.test:PORT`, each with a user and a token, behind TLS
 * with a throwaway CA (the harness of test/federation/two_servers.ts, in-memory SQLite). Stops
 * with Ctrl-C. Run: node_modules/.bin/node scripts/two_servers.ts [--help]
 */
import { parseArgs } from "node:util";
import { createUser } from "../test/kit.ts";
import { startPeers } from "../test/federation/two_servers.ts";

const { values } = parseArgs({ options: { help: { type: "boolean", short: "h" } } });
if (values.help) {
  process.stdout.write(`Usage: node scripts/two_servers.ts

Starts two federating Rookery servers on loopback, https://a.test:PORT and https://b.test:PORT,
with a user on each (alice on a.test, bob on b.test) and prints their handles and API tokens.
The servers trust each other through a throwaway CA. To reach them from a browser or a Mastodon
client on this machine, map a.test and b.test to 127.0.0.1 (/etc/hosts) and trust the printed CA
file. Everything is in memory and gone when the script stops (Ctrl-C).
`);
  process.exit(0);
}

process.stdout.write("starting two servers…\n");
const peers = await startPeers(["a.test", "b.test"]);
const [a, b] = peers.peers;
const alice = await createUser(a!.server.ctx, "alice");
const bob = await createUser(b!.server.ctx, "bob");
for (const [peer, user] of [
  [a!, alice],
  [b!, bob],
] as const) {
  process.stdout.write(
    `\n${peer.baseUrl}\n  user:  @${user.account.username}@${peer.domain}\n  token: ${user.token}\n`,
  );
}
process.stdout.write(
  `\nCA certificate: ${peers.caFile}\nTry: curl --cacert ${peers.caFile} --resolve ${a!.domain}:127.0.0.1 ` +
    `-H "Authorization: Bearer ${alice.token}" "${a!.baseUrl}/api/v2/search?resolve=true&q=bob@${b!.domain}"\n` +
    "Ctrl-C stops both.\n",
);
const stop = async () => {
  await peers.close();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
