// @ts-check
// What a bot test event's provider calls are said to be, for the console and `platform plugin trigger`
// alike: attributed only to whom the delivery's outcome allows. No DOM here, so the CLI imports it too.

/**
 * The line before the list of provider calls (or the line saying there were none); null when there is
 * nothing to add to the summary (no handler ran, or it threw, and nothing was called).
 * @param {"handled" | "no_handler" | "failed" | null | undefined} result  the project's delivery outcome, when known
 * @param {number} count  provider calls the fake recorded
 * @param {boolean} inline  whether the plugin answered with an inline reply
 * @returns {string | null}
 */
export function providerCallsHeading(result, count, inline) {
  if (count === 0) {
    if (result === "no_handler" || result === "failed") return null;
    if (inline) return "The handler made no further provider calls.";
    return result === "handled"
      ? "The handler made no provider calls."
      : "No provider calls were recorded (within 5 s).";
  }
  const calls = `${count} provider call${count === 1 ? "" : "s"}`;
  if (result === "handled") return `The project's handler made ${calls}:`;
  if (result === "no_handler") return `No handler ran; the plugin itself made ${calls}:`;
  return `${calls[0]?.toUpperCase()}${calls.slice(1)} recorded after the event:`;
}
