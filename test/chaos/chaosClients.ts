import type { AcknowledgedStart, SentEvent, UnansweredRequest } from "./chaosHistory.ts";
import type { ChaosFetch } from "./loopbackFetch.ts";
import { type SeededRandom, seededRandom } from "#test/support/seededRandom.ts";

/** One composed piece of work a client asks the chaos project for. */
export type ClientOp = "parent" | "keyed" | "waiter" | "debounced" | "idem" | "sendStart" | "long" | "slow" | "rolled";
const OPS: readonly ClientOp[] = ["parent", "keyed", "keyed", "waiter", "debounced", "idem", "sendStart", "rolled"];

/** Each client's bounded list of ops for a seed; every client begins with one long run and one slow one. */
export function planClients(seed: number, clients: number, opsPerClient: number): ClientOp[][] {
  const random = seededRandom(seed);
  return Array.from({ length: clients }, () => [
    ...(["long", "slow"] as const),
    ...Array.from({ length: Math.max(0, opsPerClient - 2) }, () => random.pick(OPS)),
  ]);
}

/** What the clients were told: the starts the platform acknowledged and every event sent. */
export interface ClientRecord {
  starts: AcknowledgedStart[];
  sends: SentEvent[];
  unanswered: UnansweredRequest[];
}

type Answer =
  | { kind: "ok"; body: Record<string, unknown> }
  | { kind: "refused"; status: number }
  | { kind: "lost"; why: string };

const RETRY_MS = 300;
// A SIGSTOPped platform answers nothing: the request is given up and retried.
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Drives the project from `clients` concurrent loops while the nemesis works. A request that got no
 * answer (refused connection, timeout, 5xx) is retried until `deadline()` (it moves while the nemesis works);
 * a 4xx is the platform's answer.
 */
export async function runClients(
  project: { url: string; fetch: ChaosFetch },
  plan: ClientOp[][],
  seed: number,
  deadline: () => number,
  log: (line: string) => void,
): Promise<ClientRecord> {
  const record: ClientRecord = { starts: [], sends: [], unanswered: [] };
  let tokens = 0;

  async function call(path: string, body: unknown): Promise<Answer> {
    try {
      const response = await project.fetch(`${project.url}${path}`, {
        method: "POST",
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.ok) return { kind: "ok", body: JSON.parse(text) as Record<string, unknown> };
      // A restarting `platform dev` binds its port before the project is loaded, and answers
      // not_found "No project at …" meanwhile: not yet up, as a refused connection is.
      if (response.status < 500 && !text.includes("No project at")) {
        log(`client: ${path} refused ${response.status} ${text.slice(0, 200)}`);
        return { kind: "refused", status: response.status };
      }
      return { kind: "lost", why: `${response.status} ${text.slice(0, 200)}` };
    } catch (error) {
      return { kind: "lost", why: String(error).slice(0, 200) };
    }
  }

  function givenUp(path: string, last: Answer | undefined): null {
    record.unanswered.push({ path, last: last?.kind === "lost" ? last.why : "never sent, the deadline had passed" });
    return null;
  }

  /** Retries until answered; answers null when refused or out of time. */
  async function answered(path: string, body: unknown): Promise<Record<string, unknown> | null> {
    let answer: Answer | undefined;
    while (Date.now() < deadline()) {
      answer = await call(path, body);
      if (answer.kind === "ok") return answer.body;
      if (answer.kind === "refused") return null;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    return givenUp(path, answer);
  }

  async function start(workflow: string, data: unknown, options: Record<string, unknown> = {}) {
    const body = await answered(`/start/${workflow}`, { data, options });
    if (!body) return null;
    const runId = String(body.runId);
    const idempotencyKey = typeof options.idempotencyKey === "string" ? options.idempotencyKey : undefined;
    record.starts.push({ workflow, runId, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });
    return runId;
  }

  /** Sends until one send is acknowledged or refused; each try carries a fresh token, so a retry is a new event. */
  async function send(to: SentEvent["to"], path: string, body: (payload: { token: string }) => unknown) {
    let answer: Answer | undefined;
    while (Date.now() < deadline()) {
      const token = `ev-${seed}-${++tokens}`;
      answer = await call(path, body({ token }));
      record.sends.push({ token, to, acknowledged: answer.kind === "ok" });
      if (answer.kind === "ok") {
        if ("workflowId" in to && typeof answer.body.runId === "string")
          record.starts.push({ workflow: "inbox", runId: answer.body.runId });
        return;
      }
      if (answer.kind === "refused") return;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    givenUp(path, answer);
  }

  async function perform(op: ClientOp, client: number, index: number, random: SeededRandom): Promise<void> {
    const tag = `${seed}-${client}-${index}`;
    switch (op) {
      case "long":
      case "slow":
      case "rolled":
        await start(op, {});
        return;
      case "parent":
        await start("parent", { children: Array.from({ length: random.int(2, 4) }, (_, i) => i + index) });
        return;
      case "keyed":
        await start("keyed", { tenant: random.pick(["a", "b", "c"]) }, { priority: random.int(1, 10) });
        return;
      case "waiter": {
        const target = await start("child", { n: index });
        const waiter = target && (await start("waiter", { target }));
        if (waiter) await send({ runId: waiter }, `/send/${waiter}/go`, (payload) => payload);
        return;
      }
      case "debounced":
        for (let i = 0; i < 3; i++) await start("debounced", { user: `u-${tag}`, i });
        return;
      case "idem":
        await Promise.all([1, 2, 3].map(() => start("idem", { tag }, { idempotencyKey: `key-${tag}` })));
        return;
      case "sendStart": {
        const workflowId = `inbox-${tag}`;
        await Promise.all(
          [1, 2].map(() =>
            send({ workflowId }, `/send-start/${workflowId}/ping`, (payload) => ({
              payload,
              start: { name: "inbox", data: {} },
            })),
          ),
        );
        return;
      }
    }
  }

  await Promise.all(
    plan.map(async (ops, client) => {
      const random = seededRandom(seed + client + 1);
      for (const [index, op] of ops.entries()) await perform(op, client, index, random);
    }),
  );
  return record;
}
