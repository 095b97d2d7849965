import { closestName } from "./closestName.ts";
import { PlatformError } from "./errors.ts";

/**
 * Refuses a key of `value` that is not in `known`: a typo (`sleepMs`, `waitfor`) or an option this
 * platform does not have would otherwise be dropped in silence and the code would run as if it
 * were not written. The error names the key, a likely meant one, and the keys there are.
 */
export function refuseUnknownKeys(value: object, known: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (known.includes(key)) continue;
    const meant = closestName(key, known);
    throw new PlatformError(
      "invalid_input",
      `${where} has no ${JSON.stringify(key)}${meant ? ` (did you mean ${JSON.stringify(meant)}?)` : ""}; it takes ${known.join(", ")}`,
    );
  }
}
