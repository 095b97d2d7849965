import { findProjectSignInRow } from "../db/projectAuthTable.ts";

/** The project a sign-in is for, as the registry (D1) knows it: never from the request. */
export interface SignInProject {
  id: number;
  slug: string;
  private: boolean;
  workerSecret: string;
  /** Lower-cased allowed email domains; `null` when the project allows every account. */
  domains: string[] | null;
}

export const SLUG = /^[a-z][a-z0-9-]{1,38}[a-z0-9]$/;

/**
 * Reads the project and its sign-in settings (`project_auth`, written from
 * the project's metadata by the API worker). A project without a row there
 * has not registered settings: every account may sign in at the platform,
 * and the project applies its own rule again at its callback.
 */
export async function findSignInProject(db: D1Database, slug: string): Promise<SignInProject | null> {
  const row = await findProjectSignInRow(db, slug);
  if (!row) return null;
  let domains: string[] | null = null;
  if (row.domains !== null) {
    const parsed = JSON.parse(row.domains) as unknown;
    // Anything but a list of strings is a corrupt row: refuse everyone rather than allow everyone.
    domains = Array.isArray(parsed)
      ? parsed.filter((d): d is string => typeof d === "string").map((d) => d.toLowerCase())
      : [];
  }
  return { id: row.id, slug: row.slug, private: row.private === 1, workerSecret: row.worker_secret, domains };
}
