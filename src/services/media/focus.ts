import { ValidationFailed } from "../../errors.ts";

/** Parses `x,y` focal-point coordinates, each between -1.0 and 1.0 (0,0 is the centre). */
export function parseFocus(value: string | undefined): { x: number; y: number } | undefined {
  if (value === undefined || value === "") return undefined;
  const parts = value.split(",").map((v) => v.trim());
  const [x, y] = parts.map(Number);
  if (
    parts.length !== 2 ||
    parts.some((p) => p === "") ||
    !Number.isFinite(x) ||
    !Number.isFinite(y) ||
    Math.abs(x) > 1 ||
    Math.abs(y) > 1
  ) {
    throw new ValidationFailed("Focus must be two numbers between -1.0 and 1.0, separated by a comma");
  }
  return { x, y };
}
