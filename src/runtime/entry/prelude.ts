import { installCronRegistrar } from "./platformHooks.ts";

// Imported by the generated entry before the project's code, so the first
// top-level `workflow()` call can already register the recovery cron.
installCronRegistrar();
