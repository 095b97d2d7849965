import { PlatformError } from "../../core/errors.ts";

/**
 * Thrown by a plugin module when the project registered no handler for what
 * was delivered (e.g. an unknown command): answered 404 `not_found` with
 * `handled: 0`, so it is told apart from a handler that threw.
 */
export class NoPluginHandler extends PlatformError {
  /**
   * The names the project did register for this kind (commands, customIds, …): for the test kit's
   * message. Kept off the wire (not in `toJSON`): the delivery's answer says only what was missing.
   */
  readonly registered: readonly string[];

  constructor(message: string, registered: readonly string[] = []) {
    super("not_found", message);
    this.registered = registered;
  }
}
