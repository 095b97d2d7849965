import { DurableObject } from "cloudflare:workers";
import { meterAlarmRun, setAlarmMetered } from "./storageMeter.ts";

/** How long an install code lives. */
export const SESSION_CODE_LIFETIME_MS = 2 * 60 * 1000;

export interface SessionCodeRecord {
  code: string;
  projectId: number;
  userId: number;
  pluginId: string;
  expiresAt: number;
}

export type SessionCodeConsumption =
  | { ok: true; projectId: number; userId: number; pluginId: string }
  | { ok: false; reason: "unknown" | "expired" | "used" | "wrong_plugin" };

interface Stored extends SessionCodeRecord {
  usedAt: number | null;
}

/**
 * One actor per install code (named by the code). Single-threaded, so
 * `consume` is atomic: of any number of concurrent calls exactly one succeeds.
 * The record is wiped by an alarm shortly after it expires.
 */
export class SessionCode extends DurableObject {
  /** Stores the code's binding; `false` if this actor already holds one (a code is never reused). */
  async create(record: SessionCodeRecord): Promise<boolean> {
    if (await this.ctx.storage.get<Stored>("code")) return false;
    await this.ctx.storage.put<Stored>("code", { ...record, usedAt: null });
    await setAlarmMetered(this.ctx.storage, record.expiresAt + 60_000);
    return true;
  }

  /** Uses the code once, for `pluginId`. A wrong plugin does not use it up. */
  async consume(pluginId: string, now: number = Date.now()): Promise<SessionCodeConsumption> {
    const stored = await this.ctx.storage.get<Stored>("code");
    if (!stored) return { ok: false, reason: "unknown" };
    if (stored.usedAt !== null) return { ok: false, reason: "used" };
    if (now >= stored.expiresAt) return { ok: false, reason: "expired" };
    if (stored.pluginId !== pluginId) return { ok: false, reason: "wrong_plugin" };
    await this.ctx.storage.put<Stored>("code", { ...stored, usedAt: now });
    return { ok: true, projectId: stored.projectId, userId: stored.userId, pluginId: stored.pluginId };
  }

  override async alarm(): Promise<void> {
    meterAlarmRun();
    await this.ctx.storage.deleteAll();
  }
}
