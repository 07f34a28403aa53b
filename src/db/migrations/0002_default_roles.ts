import type { Kysely } from "kysely";
import type { RookeryMigration } from "./types.ts";

// Frozen copies of the permission bits in services/accounts/roles.ts as they were when this ran.
const ADMINISTRATOR = 1;
const ALL_BUT_ADMINISTRATOR_AND_DEVOPS = ((1 << 21) - 1) & ~0b11;
const MODERATOR = (1 << 2) | (1 << 3) | (1 << 4) | (1 << 8) | (1 << 9) | (1 << 10);
const INVITE_USERS = 1 << 16;

export const defaultRoles: RookeryMigration = {
  name: "0002_default_roles",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>) {
    const now = new Date().toISOString();
    const role = (id: string, name: string, permissions: number, position: number, highlighted: boolean) => ({
      id,
      name,
      permissions,
      position,
      highlighted,
      color: "",
      created_at: now,
      updated_at: now,
    });
    await db
      .insertInto("user_roles")
      .values([
        role("-99", "", INVITE_USERS, -1, false),
        role("1", "Moderator", MODERATOR, 10, true),
        role("2", "Admin", ALL_BUT_ADMINISTRATOR_AND_DEVOPS, 100, true),
        role("3", "Owner", ADMINISTRATOR, 1000, true),
      ])
      .execute();
  },
};
