/** Zero configuration on a development or offline machine: a loopback LOCAL_DOMAIN needs no outside DNS. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import { acceptAllMailDomains } from "../src/services/mail/domains.ts";

const LOOPBACK_DOMAINS = [
  "localhost",
  "localhost:3000",
  "dev.localhost:8080",
  "127.0.0.1",
  "127.0.0.1:3000",
  "127.1.2.3",
];

describe("EMAIL_DOMAIN_DNS_CHECK follows LOCAL_DOMAIN", () => {
  test("the default (LOCAL_DOMAIN unset: localhost:3000) checks no DNS", () => {
    assert.equal(loadConfig({}).emailDomainDnsCheck, false);
  });

  test("loopback domains, with or without a port, turn the check off", () => {
    for (const domain of LOOPBACK_DOMAINS) {
      assert.equal(loadConfig({ LOCAL_DOMAIN: domain }).emailDomainDnsCheck, false, domain);
    }
  });

  test("the IPv6 loopback is accepted, bare or bracketed, and turns the check off", () => {
    for (const [given, stored] of [
      ["::1", "[::1]"],
      ["[::1]", "[::1]"],
      ["[::1]:3000", "[::1]:3000"],
    ]) {
      const config = loadConfig({ LOCAL_DOMAIN: given });
      assert.equal(config.localDomain, stored, given);
      assert.equal(config.emailDomainDnsCheck, false, given);
      assert.equal(config.https, false, given);
      assert.equal(config.baseUrl, `http://${stored}`, given);
    }
  });

  test("EMAIL_DOMAIN_DNS_CHECK=true turns it back on for a loopback domain", () => {
    const config = loadConfig({ LOCAL_DOMAIN: "localhost:3000", EMAIL_DOMAIN_DNS_CHECK: "true" });
    assert.equal(config.emailDomainDnsCheck, true);
  });

  test("a public domain checks DNS unless told not to", () => {
    assert.equal(loadConfig({ LOCAL_DOMAIN: "social.example" }).emailDomainDnsCheck, true);
    assert.equal(loadConfig({ LOCAL_DOMAIN: "127.0.0.1.example" }).emailDomainDnsCheck, true);
    const told = loadConfig({ LOCAL_DOMAIN: "social.example", EMAIL_DOMAIN_DNS_CHECK: "false" });
    assert.equal(told.emailDomainDnsCheck, false);
  });

  test("WEB_DOMAIN does not decide it: handles live at LOCAL_DOMAIN", () => {
    const config = loadConfig({ LOCAL_DOMAIN: "social.example", WEB_DOMAIN: "localhost:3000" });
    assert.equal(config.emailDomainDnsCheck, true);
  });

  test("the server booted on localhost accepts every e-mail domain without asking DNS", async () => {
    const base = { DATABASE_URL: "sqlite::memory:", LOG_LEVEL: "silent" };
    const local = await boot(loadConfig({ ...base, LOCAL_DOMAIN: "localhost:3000" }), { outboundAgent: false });
    const publicServer = await boot(loadConfig({ ...base, LOCAL_DOMAIN: "social.example" }), { outboundAgent: false });
    try {
      assert.equal(local.mailDomains, acceptAllMailDomains);
      assert.notEqual(publicServer.mailDomains, acceptAllMailDomains);
    } finally {
      await local.db.close();
      await publicServer.db.close();
    }
  });
});
