/** Who and where in the fake workspace: its teams, its one user, its channels. */

export interface TeamInfo {
  id: string;
  name: string;
  botUserId: string;
}

export const FAKE_CHANNELS = ["C0GENERAL", "C0RANDOM"] as const;
export const FAKE_CHANNEL_NAMES: Record<string, string> = { C0GENERAL: "general", C0RANDOM: "random" };

export const FAKE_USER_ID = "U0ALICE";
export const FAKE_USER_NAME = "alice";
export const DEFAULT_TEAM = { id: "T0TEST", name: "Test Workspace" };

export function teamInfo(id: string): TeamInfo {
  const name = id === DEFAULT_TEAM.id ? DEFAULT_TEAM.name : `Workspace ${id}`;
  return { id, name, botUserId: `U0BOT${id.slice(1)}` };
}

/** The fake's user as interactivity payloads show it. */
export function userPayload(team: TeamInfo) {
  return { id: FAKE_USER_ID, username: FAKE_USER_NAME, name: FAKE_USER_NAME, team_id: team.id };
}
