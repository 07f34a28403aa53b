/**
 * A throwaway certificate authority and TLS front for servers on loopback under their own host
 * names (reference/federation.md §12.1): the federation tests, scripts/two_servers.ts and the
 * federation benchmark use it. Made with openssl; EC P-256, so a CA and a leaf for a few hundred
 * names take well under a second.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";

export interface Pki {
  dir: string;
  caFile: string;
  caPem: string;
  key: string;
  cert: string;
}

/** A CA and one EC P-256 leaf naming every host of `hosts` (a few hundred names are fine). */
export function makePki(hosts: string[]): Pki {
  const dir = mkdtempSync(join(tmpdir(), "rookery-pki-"));
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    "-days",
    "2",
    "-subj",
    "/CN=Rookery test CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  );
  writeFileSync(
    join(dir, "leaf.ext"),
    `subjectAltName=${hosts.map((host) => `DNS:${host}`).join(",")}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
  openssl("req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", `/CN=${hosts[0]}`);
  openssl(
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "leaf.pem",
    "-days",
    "2",
    "-extfile",
    "leaf.ext",
  );
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return { dir, caFile: join(dir, "ca.pem"), caPem: read("ca.pem"), key: read("leaf.key"), cert: read("leaf.pem") };
}

export function removePki(pki: Pki): void {
  rmSync(pki.dir, { recursive: true, force: true });
}

/** A TLS server on an ephemeral loopback port piping each connection to `target()`'s plain port. */
export async function tlsFront(pki: Pki, target: () => number): Promise<tls.Server> {
  const front = tls.createServer({ key: pki.key, cert: pki.cert }, (socket) => {
    const upstream = net.connect(target(), "127.0.0.1");
    socket.setNoDelay(true);
    upstream.setNoDelay(true);
    socket.pipe(upstream).pipe(socket);
    const end = () => {
      socket.destroy();
      upstream.destroy();
    };
    socket.on("error", end);
    upstream.on("error", end);
    socket.on("close", end);
    upstream.on("close", end);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return front;
}
