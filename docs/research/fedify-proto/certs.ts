// Throwaway CA + leaf certificates for loopback TLS tests, made with the openssl CLI.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPki { dir: string; caPem: string; caFile: string; leaf: Record<string, { key: string; cert: string }>; }

export function makeTestPki(hosts: string[]): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "rookery-pki-"));
  const ossl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  // CA: EC P-256 is fast to generate; basicConstraints CA:TRUE is required by OpenSSL 3 / Node's verifier.
  ossl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Rookery test CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign");
  const leaf: TestPki["leaf"] = {};
  for (const host of hosts) {
    writeFileSync(join(dir, `${host}.ext`), `subjectAltName=DNS:${host}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
    ossl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
      "-keyout", `${host}.key`, "-out", `${host}.csr`, "-subj", `/CN=${host}`);
    ossl("x509", "-req", "-in", `${host}.csr`, "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
      "-out", `${host}.pem`, "-days", "2", "-extfile", `${host}.ext`);
    leaf[host] = { key: readFileSync(join(dir, `${host}.key`), "utf8"), cert: readFileSync(join(dir, `${host}.pem`), "utf8") };
  }
  return { dir, caPem: readFileSync(join(dir, "ca.pem"), "utf8"), caFile: join(dir, "ca.pem"), leaf };
}

if (import.meta.main) {
  const t = Date.now();
  const pki = makeTestPki(["a.test", "b.test"]);
  console.log("pki in", Date.now() - t, "ms at", pki.dir);
}
