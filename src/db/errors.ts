/** Whether a database error is a unique-constraint violation (PostgreSQL 23505, SQLite UNIQUE). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number; message?: string };
  return (
    e?.code === "23505" ||
    e?.errcode === 2067 ||
    e?.errcode === 1555 ||
    /UNIQUE constraint failed/.test(e?.message ?? "")
  );
}

/** Whether a database error is a foreign-key violation: the row referred to is gone. */
export function isForeignKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number; message?: string };
  return e?.code === "23503" || e?.errcode === 787 || /FOREIGN KEY constraint failed/.test(e?.message ?? "");
}
