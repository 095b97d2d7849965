import { isDeepStrictEqual } from "node:util";
import type { ChaosHistory, HistoryEvent, HistoryRun } from "./chaosHistory.ts";

/** One invariant's verdict: what it counted (e.g. "225 runs") and every violation, each naming its run. */
export interface InvariantResult {
  name: string;
  /** What was checked, e.g. "225 runs" or "1200 commits". */
  checked: string;
  violations: string[];
}

const TERMINAL = new Set(["workflow_completed", "workflow_failed", "workflow_cancelled"]);
const ENDED = new Set(["completed", "failed", "cancelled"]);

function terminalEvent(run: HistoryRun): HistoryEvent | undefined {
  return run.events.find((event) => TERMINAL.has(event.type));
}

function everyRunEnded(history: ChaosHistory): InvariantResult {
  return {
    name: "stuck",
    checked: `${history.runs.length} runs`,
    violations: history.runs.filter((run) => !ENDED.has(run.status)).map((run) => `${run.id} is ${run.status}`),
  };
}

function oneTerminalEvent(history: ChaosHistory): InvariantResult {
  const violations: string[] = [];
  for (const run of history.runs) {
    const terminals = run.events.filter((event) => TERMINAL.has(event.type));
    if (terminals.length !== 1) violations.push(`${run.id} has ${terminals.length} terminal events`);
    else if (run.events.at(-1) !== terminals[0]) violations.push(`${run.id} has events after ${terminals[0]!.type}`);
  }
  return { name: "runs without exactly one terminal event", checked: `${history.runs.length} runs`, violations };
}

function seqIncreasing(history: ChaosHistory): InvariantResult {
  let events = 0;
  const violations: string[] = [];
  for (const run of history.runs) {
    events += run.events.length;
    run.events.forEach((event, i) => {
      const before = run.events[i - 1];
      if (before && event.seq <= before.seq) violations.push(`${run.id}: seq ${event.seq} after ${before.seq}`);
    });
  }
  return { name: "seq out of order", checked: `${events} events`, violations };
}

/**
 * Each step_completed or step_failed settles the step_started before it that nothing has settled yet: a
 * second settlement of one claimed attempt (a completed step failed, or completed again) is a duplicate
 * commit. A committed attempt must be in the ledger.
 */
function stepsCommittedOnce(history: ChaosHistory): InvariantResult[] {
  const attempted = new Set(history.ledger.map((a) => `${a.runId}/${a.step}/${a.attempt}`));
  let commits = 0;
  const duplicates: string[] = [];
  const unattempted: string[] = [];
  for (const run of history.runs) {
    let open: { step: string; attempt: number } | undefined;
    for (const event of run.events) {
      if (event.type === "step_started")
        open = { step: String(event.payload.step), attempt: Number(event.payload.attempt) };
      if (event.type === "step_failed") {
        if (open?.step !== event.payload.step)
          duplicates.push(`${run.id}: step_failed ${event.payload.step} (seq ${event.seq}) settles no open attempt`);
        open = undefined;
      }
      if (event.type !== "step_completed" || event.payload.copied_from_seq !== undefined) continue;
      commits++;
      if (open === undefined || open.step !== event.payload.step) {
        duplicates.push(`${run.id}: step_completed ${event.payload.step} (seq ${event.seq}) commits no open attempt`);
        continue;
      }
      if (!attempted.has(`${run.id}/${open.step}/${open.attempt}`))
        unattempted.push(`${run.id}: ${open.step} attempt ${open.attempt} committed but never reached the ledger`);
      open = undefined;
    }
  }
  return [
    { name: "duplicate commits", checked: `${commits} commits`, violations: duplicates },
    {
      name: "commits without a ledger attempt",
      checked: `${history.ledger.length} ledger attempts`,
      violations: unattempted,
    },
  ];
}

/** A parent's result lists `{ runId, result }` per child; each must be that child's own completed result. */
function parentsMatchChildren(history: ChaosHistory): InvariantResult {
  const byId = new Map(history.runs.map((run) => [run.id, run]));
  const violations: string[] = [];
  let parents = 0;
  for (const run of history.runs) {
    const listed = (run.result as { children?: { runId: string; result: unknown }[] } | undefined)?.children;
    if (!Array.isArray(listed)) continue;
    parents++;
    for (const child of listed) {
      const own = byId.get(child.runId);
      if (!own) violations.push(`${run.id}: child ${child.runId} does not exist`);
      else if (own.status !== "completed" || !isDeepStrictEqual(own.result, child.result))
        violations.push(
          `${run.id}: child ${child.runId} gave ${JSON.stringify(child.result)}, its log says ${own.status} ${JSON.stringify(own.result)}`,
        );
    }
  }
  return { name: "parents unlike their children", checked: `${parents} parents`, violations };
}

/** From event times: a run holds its slot from its first step_started to its terminal event (a subset of the real hold). */
function concurrencyRespected(history: ChaosHistory): InvariantResult {
  const violations: string[] = [];
  let peaks = "";
  for (const { workflow, limit } of history.concurrency) {
    const edges: { at: number; delta: number; runId: string }[] = [];
    for (const run of history.runs.filter((r) => r.name === workflow)) {
      const first = run.events.find((event) => event.type === "step_started");
      const end = terminalEvent(run);
      if (!first || !end) continue;
      edges.push({ at: first.at, delta: 1, runId: run.id }, { at: end.at, delta: -1, runId: run.id });
    }
    // At one instant an end frees its slot before a start takes it.
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let active = 0;
    let peak = 0;
    for (const edge of edges) {
      active += edge.delta;
      peak = Math.max(peak, active);
      if (active > limit)
        violations.push(`${workflow}: ${active} runs active at ${edge.at} (limit ${limit}) when ${edge.runId} started`);
    }
    peaks += `${peaks ? ", " : ""}${workflow} peak ${peak}/${limit}`;
  }
  return { name: "concurrency limit exceeded", checked: peaks || "no limits", violations };
}

/** Each idempotency key answered one run and created one; runs sharing a workflow id never overlap in time. */
function oneRunPerKeyAndWorkflowId(history: ChaosHistory): InvariantResult {
  const violations: string[] = [];
  const answered = new Map<string, Set<string>>();
  for (const start of history.starts) {
    if (start.idempotencyKey === undefined) continue;
    const key = `${start.workflow}/${start.idempotencyKey}`;
    answered.set(key, (answered.get(key) ?? new Set()).add(start.runId));
  }
  const created = new Map<string, string[]>();
  for (const run of history.runs) {
    const key = run.events[0]?.type === "workflow_created" ? run.events[0].payload.idempotency_key : undefined;
    if (typeof key === "string")
      created.set(`${run.name}/${key}`, [...(created.get(`${run.name}/${key}`) ?? []), run.id]);
  }
  for (const [key, runIds] of answered)
    if (runIds.size !== 1)
      violations.push(`idempotency key ${key} answered ${runIds.size} runs: ${[...runIds].join(", ")}`);
  for (const [key, runIds] of created)
    if (runIds.length !== 1)
      violations.push(`idempotency key ${key} created ${runIds.length} runs: ${runIds.join(", ")}`);

  const byWorkflowId = new Map<string, HistoryRun[]>();
  for (const run of history.runs) byWorkflowId.set(run.workflowId, [...(byWorkflowId.get(run.workflowId) ?? []), run]);
  for (const [workflowId, runs] of byWorkflowId) {
    const spans = runs
      .map((run) => ({
        id: run.id,
        from: run.events[0]?.at ?? 0,
        to: terminalEvent(run)?.at ?? Number.POSITIVE_INFINITY,
      }))
      .sort((a, b) => a.from - b.from);
    spans.forEach((span, i) => {
      const before = spans[i - 1];
      if (before && span.from < before.to)
        violations.push(`workflow id ${workflowId}: ${span.id} started while ${before.id} was active`);
    });
  }
  return {
    name: "duplicate runs per idempotency key or active workflow id",
    checked: `${answered.size} idempotency keys, ${byWorkflowId.size} workflow ids`,
    violations,
  };
}

/** An acknowledged event is in its run's log exactly once; one the client never heard back about, at most once. */
function eventsReceivedOnce(history: ChaosHistory): InvariantResult {
  const received = new Map<string, HistoryRun[]>();
  for (const run of history.runs)
    for (const event of run.events) {
      const token = (event.payload.payload as { token?: unknown } | null | undefined)?.token;
      if (event.type === "event_received" && typeof token === "string")
        received.set(token, [...(received.get(token) ?? []), run]);
    }
  const violations: string[] = [];
  for (const sent of history.sends) {
    const runs = received.get(sent.token) ?? [];
    const target = "runId" in sent.to ? `run ${sent.to.runId}` : `workflow id ${sent.to.workflowId}`;
    if (sent.acknowledged ? runs.length !== 1 : runs.length > 1)
      violations.push(
        `event ${sent.token} to ${target} (${sent.acknowledged ? "acknowledged" : "unanswered"}) received ${runs.length} times`,
      );
    const to = sent.to;
    if (runs.some((run) => ("runId" in to ? run.id !== to.runId : run.workflowId !== to.workflowId)))
      violations.push(`event ${sent.token} to ${target} landed in ${runs.map((run) => run.id).join(", ")}`);
  }
  const acknowledged = history.sends.filter((sent) => sent.acknowledged).length;
  return { name: "events not received exactly once", checked: `${acknowledged} acknowledged sends`, violations };
}

/** Every request a client made was answered (2xx, or a 4xx refusal) once the faults were over, within the deadline. */
function requestsAnswered(history: ChaosHistory): InvariantResult {
  const answered = history.starts.length + history.sends.filter((sent) => sent.acknowledged).length;
  return {
    name: "requests never answered",
    checked: `${answered} answered requests`,
    violations: history.unanswered.map(({ path, last }) => `POST ${path} got no answer by the deadline; last: ${last}`),
  };
}

function acknowledgedStartsExist(history: ChaosHistory): InvariantResult {
  const ids = new Set(history.runs.map((run) => run.id));
  return {
    name: "lost acknowledged starts",
    checked: `${history.starts.length} acknowledged starts`,
    violations: history.starts
      .filter((start) => !ids.has(start.runId))
      .map((s) => `${s.workflow} run ${s.runId} is missing`),
  };
}

/** A run counting its steps in the scratchpad (`{ count, steps }`) saw each step's write committed once. */
function countsMatchSteps(history: ChaosHistory): InvariantResult {
  const counted = history.runs.filter((run) => {
    const result = run.result as { count?: unknown; steps?: unknown } | undefined;
    return typeof result?.count === "number" && typeof result.steps === "number";
  });
  return {
    name: "long runs miscounted",
    checked: `${counted.length} long runs`,
    violations: counted
      .filter((run) => {
        const { count, steps } = run.result as { count: number; steps: number };
        return count !== steps;
      })
      .map((run) => `${run.id} counted ${JSON.stringify(run.result)}`),
  };
}

/**
 * Rollbacks (docs/workflows.md): a failed run settles (rollback_completed, or rollback_failed for good)
 * each completion of a step with a handler once, latest first; a run that did not fail rolls nothing
 * back. A completed rollback's attempt must be in the ledger (`rollback:<step>`), as a commit's must.
 */
function rollbacksOnceLatestFirst(history: ChaosHistory): InvariantResult {
  const attempted = new Set(history.ledger.map((a) => `${a.runId}/${a.step}/${a.attempt}`));
  const violations: string[] = [];
  let rolledBack = 0;
  for (const { workflow, steps } of history.rollbacks)
    for (const run of history.runs.filter((r) => r.name === workflow)) {
      const completions = run.events
        .filter(
          (e) =>
            e.type === "step_completed" &&
            steps.includes(String(e.payload.step)) &&
            e.payload.copied_from_seq === undefined,
        )
        .map((e) => e.seq);
      const settled: number[] = [];
      let open: { step: string; attempt: number } | undefined;
      for (const event of run.events) {
        if (event.type === "rollback_started")
          open = { step: String(event.payload.step), attempt: Number(event.payload.attempt) };
        const final =
          event.type === "rollback_completed" ||
          (event.type === "rollback_failed" && event.payload.retryable === false);
        if (!final) continue;
        settled.push(Number(event.payload.completed_seq));
        if (event.type === "rollback_completed") {
          rolledBack++;
          if (!open || !attempted.has(`${run.id}/rollback:${open.step}/${open.attempt}`))
            violations.push(`${run.id}: rollback of ${event.payload.step} (seq ${event.seq}) never reached the ledger`);
        }
        open = undefined;
      }
      const expected = run.status === "failed" ? completions.toReversed() : [];
      if (!isDeepStrictEqual(settled, expected))
        violations.push(
          `${run.id} (${run.status}) rolled back the completions at seq [${settled.join(", ")}], expected [${expected.join(", ")}]`,
        );
    }
  return { name: "rollbacks not run once each, latest first", checked: `${rolledBack} rollbacks`, violations };
}

/**
 * Pushes of compatible builds mid-run (the `up` backend; docs/guarantees.md): the ledger says which build ran
 * each attempt. A run whose attempts ran more than one build crossed a push; it ran the rest of its steps
 * without breaking (it ended as without a push: a workflow with rollbacks fails at its last step, every
 * other completes); once a newer build ran one of its steps, no older build ran another; and a step started
 * (its `step_started`) after a push had answered ran that push's build or a newer one.
 */
function runsAcrossPushes(history: ChaosHistory): InvariantResult {
  const builds = new Map<string, number[]>();
  const buildOf = new Map<string, number>();
  for (const { runId, step, attempt, build } of history.ledger) {
    if (build === undefined) continue;
    builds.set(runId, [...(builds.get(runId) ?? []), build]);
    buildOf.set(`${runId}/${step}/${attempt}`, build);
  }
  const failing = new Set(history.rollbacks.map((r) => r.workflow));
  const violations: string[] = [];
  let crossed = 0;
  let afterPush = 0;
  for (const run of history.runs) {
    for (const event of run.events) {
      if (event.type !== "step_started") continue;
      const pushed = history.pushes.filter((push) => push.at < event.at).at(-1);
      const ran = buildOf.get(`${run.id}/${event.payload.step}/${event.payload.attempt}`);
      if (!pushed || ran === undefined) continue;
      afterPush++;
      if (ran < pushed.build)
        violations.push(
          `${run.id}: ${event.payload.step} attempt ${event.payload.attempt} started after build ${pushed.build} was pushed and ran build ${ran}`,
        );
    }
    const ran = builds.get(run.id) ?? [];
    ran.forEach((build, i) => {
      if (i > 0 && build < ran[i - 1]!)
        violations.push(`${run.id} ran build ${build} after build ${ran[i - 1]}: a push's old version ran on`);
    });
    if (new Set(ran).size < 2) continue;
    crossed++;
    const expected = failing.has(run.name) ? "failed" : "completed";
    if (run.status !== expected)
      violations.push(
        `${run.id} (${run.name}) crossed builds ${[...new Set(ran)].join(" → ")} and ended ${run.status}, not ${expected}`,
      );
  }
  return {
    name: "runs broken by a push",
    checked: `${history.pushes.length} pushes, ${crossed} runs across a push, ${afterPush} steps started after one`,
    violations,
  };
}

/** Every invariant of the chaos suite over one history; the history passes when none has a violation. */
export function checkHistory(history: ChaosHistory): InvariantResult[] {
  return [
    everyRunEnded(history),
    oneTerminalEvent(history),
    seqIncreasing(history),
    ...stepsCommittedOnce(history),
    parentsMatchChildren(history),
    concurrencyRespected(history),
    oneRunPerKeyAndWorkflowId(history),
    eventsReceivedOnce(history),
    acknowledgedStartsExist(history),
    requestsAnswered(history),
    countsMatchSteps(history),
    rollbacksOnceLatestFirst(history),
    runsAcrossPushes(history),
  ];
}

/** The run ids a failing verdict names, so the report can print their histories. */
export function runsNamedBy(results: InvariantResult[], history: ChaosHistory): HistoryRun[] {
  const text = results.flatMap((result) => result.violations).join("\n");
  return history.runs.filter((run) => text.includes(run.id));
}

/** "225 runs, 0 stuck; 1200 commits, 0 duplicate commits; …", one invariant per line. */
export function formatVerdict(results: InvariantResult[]): string {
  return results.map((result) => `${result.checked}, ${result.violations.length} ${result.name}`).join("\n");
}
