// The design card's path for the one-time install code actor; the class lives with the platform's actors.
export { SessionCode, type SessionCodeConsumption } from "../platform/actors/SessionCode.ts";
