import { meterActiveWork, meteringRequests } from "./storageMeter.ts";

/**
 * Times the entries into instances of `actorClass` on the meter's active time
 * (storageMeter.ts): each public method workerd calls (an RPC method, `alarm`)
 * that answers a promise makes its actor active until the promise settles,
 * from the moment the actor runs it, so the wait for the isolate before that
 * is not counted. A method answering at once takes no time on workerd's clock
 * (it moves with I/O only), so it is left untimed. A public method called from
 * inside the actor overlaps the entry that called it, which counts once. With
 * the meter off, the wrapper only tests a boolean.
 */
export function meterActorEntries(actorClass: { prototype: object }): void {
  const prototype = actorClass.prototype;
  for (const name of Object.getOwnPropertyNames(prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(prototype, name)!;
    if (name === "constructor" || typeof descriptor.value !== "function") continue;
    const method = descriptor.value as (...args: unknown[]) => unknown;
    Object.defineProperty(prototype, name, {
      ...descriptor,
      value: function meteredEntry(this: { ctx: { id: object } }, ...args: unknown[]) {
        const answer = method.apply(this, args);
        if (meteringRequests() && answer instanceof Promise) meterActiveWork(this.ctx.id, answer);
        return answer;
      },
    });
  }
}
