/**
 * What the admin-area tests share: a signed-in staff browser, and the who-may-open-it checks every
 * section repeats (not signed in → the sign-in page; a user whose role lacks the permission → a
 * 403 page; a form without its CSRF token → a 422 page that changed nothing).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { alertOf, Browser } from "../../browser.ts";
import { createUser, type TestServer, type TestUser } from "../../kit.ts";

/** What a form posted without its page's CSRF token answers (a 422 page). */
export const EXPIRED = "This form has expired. Please go back, reload the page and try again.";

let counter = 0;

/** A user of `role` (or none) and a browser signed in as them. */
export async function staffBrowser(
  server: TestServer,
  role: "Owner" | "Admin" | "Moderator" | undefined,
  prefix = "staff",
): Promise<{ user: TestUser; browser: Browser }> {
  const user = await createUser(server.ctx, `${prefix}${++counter}`, role ? { role } : {});
  const browser = new Browser(server.app);
  const res = await browser.signIn(user.user.email);
  assert.equal(res.statusCode, 303, `sign-in of ${user.username}: ${res.body.slice(0, 300)}`);
  return { user, browser };
}

export interface StaffOnlyOptions {
  server: () => TestServer;
  /** Pages (GET) of the section. */
  pages: string[];
  /** A role that has the permission, and one that lacks it (undefined: a plain user). */
  allowed: "Owner" | "Admin" | "Moderator";
  refused: "Moderator" | undefined;
}

/** The access checks of a section's pages. */
export function describeStaffOnly(options: StaffOnlyOptions): void {
  describe("who may open it", () => {
    test("not signed in: the browser is sent to sign in and comes back", async () => {
      const browser = new Browser(options.server().app);
      for (const path of options.pages) {
        const res = await browser.get(path);
        assert.equal(res.statusCode, 303, path);
        assert.equal(res.headers.location, `/auth/sign_in?return_to=${encodeURIComponent(path.split("?")[0])}`);
      }
    });

    test(`${options.refused ?? "a plain user"}: 403, a page that says so`, async () => {
      const { browser } = await staffBrowser(options.server(), options.refused, "refused");
      for (const path of options.pages) {
        const res = await browser.get(path);
        assert.equal(res.statusCode, 403, path);
        assert.match(String(res.headers["content-type"]), /^text\/html/);
        assert.equal(alertOf(res.body), "You are not allowed to open this page.");
      }
    });

    test(`${options.allowed}: the pages open`, async () => {
      const { browser } = await staffBrowser(options.server(), options.allowed, "allowed");
      for (const path of options.pages) assert.equal((await browser.get(path)).statusCode, 200, path);
    });
  });
}
