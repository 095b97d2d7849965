import { PlatformError } from "../../core/errors.ts";

/**
 * Thrown by a plugin module when the project registered no handler for what
 * was dispatched (e.g. an unknown command): answered 404 `not_found` with
 * `handled: 0`, so it is told apart from a handler that threw.
 */
export class NoPluginHandler extends PlatformError {
  constructor(message: string) {
    super("not_found", message);
  }
}
