import { NoPluginHandler } from "./noPluginHandler.ts";

/**
 * How an interaction finds its handler (`chatserver.onComponent`,
 * `onModalSubmit`, `workspace.onAction`, `onViewSubmission`): the handler
 * registered under the id itself, or under the longest name the id starts
 * with followed by ":", so `approve` takes `approve:run-42`. The part after
 * the name is data the bot put there; anyone who can craft the id can put
 * anything there, so a handler checks what it names.
 */
export function handlerByPrefix<H>(handlers: ReadonlyMap<string, H>, id: string): H | undefined {
  let best: { name: string; handler: H } | undefined;
  for (const [name, handler] of handlers) {
    if (id !== name && !id.startsWith(`${name}:`)) continue;
    if (!best || name.length > best.name.length) best = { name, handler };
  }
  return best?.handler;
}

/** `handlerByPrefix`, or `NoPluginHandler` (404) naming the call that registers one: `onAction`. */
export function requireHandlerByPrefix<H>(handlers: ReadonlyMap<string, H>, id: string, registeredBy: string): H {
  const handler = handlerByPrefix(handlers, id);
  if (!handler)
    throw new NoPluginHandler(`This project has no ${registeredBy} handler for ${JSON.stringify(id)}.`, [
      ...handlers.keys(),
    ]);
  return handler;
}
