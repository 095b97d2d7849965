import { describe, expect, it } from "vitest";
import {
  decideFlow,
  EMPTY_FLOW_KEY,
  explainQueued,
  type FlowControl,
  type FlowInput,
  type FlowKeyState,
  flowKeyOf,
  toFlowControl,
} from "#src/engine/flow/flowControl.ts";

const flow = (options: Parameters<typeof toFlowControl>[1]) => toFlowControl("w", options)!;

/** Feeds the inputs in order; answers each step's arrival, dequeues and wake time, and the final state. */
function play(control: FlowControl, inputs: FlowInput[], from: FlowKeyState = EMPTY_FLOW_KEY) {
  let state = from;
  const steps = inputs.map((input) => {
    const decision = decideFlow(state, control, input);
    state = decision.state;
    return { arrival: decision.arrival?.kind, dequeue: decision.dequeue, wakeAt: decision.wakeAt };
  });
  return { steps, state };
}

const arrive = (runId: string, now = 0): FlowInput => ({ type: "arrive", runId, now });
const ended = (runId: string, now = 0): FlowInput => ({ type: "ended", runId, now });
const tick = (now: number): FlowInput => ({ type: "tick", now });

describe("decideFlow", () => {
  it.each([
    {
      name: "concurrency 2: two start, the third queues and starts when one ends",
      control: flow({ concurrency: { limit: 2 } }),
      inputs: [arrive("a"), arrive("b"), arrive("c"), ended("a", 5)],
      steps: [
        { arrival: "start", dequeue: [], wakeAt: null },
        { arrival: "start", dequeue: [], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: null },
        { arrival: undefined, dequeue: ["c"], wakeAt: null },
      ],
      state: { active: ["b", "c"], queue: [], started: [], debounce: null },
    },
    {
      name: "concurrency 1: a queued run that is cancelled gives up its place; arrival order is kept",
      control: flow({ concurrency: { limit: 1 } }),
      inputs: [arrive("a"), arrive("b"), arrive("c"), ended("b"), ended("a")],
      steps: [
        { arrival: "start", dequeue: [], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: null },
        { arrival: undefined, dequeue: [], wakeAt: null },
        { arrival: undefined, dequeue: ["c"], wakeAt: null },
      ],
      state: { active: ["c"], queue: [], started: [], debounce: null },
    },
    {
      name: "throttle 2 per 100 ms: the third waits for the period of the first",
      control: flow({ throttle: { limit: 2, periodMS: 100 } }),
      inputs: [arrive("a", 0), arrive("b", 10), arrive("c", 20), tick(99), tick(100)],
      steps: [
        { arrival: "start", dequeue: [], wakeAt: null },
        { arrival: "start", dequeue: [], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: 100 },
        { arrival: undefined, dequeue: [], wakeAt: 100 },
        { arrival: undefined, dequeue: ["c"], wakeAt: null },
      ],
      state: { active: ["a", "b", "c"], queue: [], started: [10, 100], debounce: null },
    },
    {
      name: "debounce 1 s: later starts join the first and push its start back; it starts after the quiet period",
      control: flow({ debounce: { periodMS: 1000 } }),
      inputs: [arrive("a", 0), arrive("b", 300), arrive("c", 900), tick(1899), tick(1900), arrive("d", 2000)],
      steps: [
        { arrival: "queue", dequeue: [], wakeAt: 1000 },
        { arrival: "join", dequeue: [], wakeAt: 1300 },
        { arrival: "join", dequeue: [], wakeAt: 1900 },
        { arrival: undefined, dequeue: [], wakeAt: 1900 },
        { arrival: undefined, dequeue: ["a"], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: 3000 },
      ],
      state: { active: ["a"], queue: [], started: [], debounce: { runId: "d", until: 3000 } },
    },
    {
      name: "debounce with concurrency 1: the debounced run waits for the slot after its quiet period",
      control: flow({ debounce: { periodMS: 10 }, concurrency: { limit: 1 } }),
      inputs: [arrive("a", 0), tick(10), arrive("b", 11), tick(21), ended("a", 30)],
      steps: [
        { arrival: "queue", dequeue: [], wakeAt: 10 },
        { arrival: undefined, dequeue: ["a"], wakeAt: null },
        { arrival: "queue", dequeue: [], wakeAt: 21 },
        { arrival: undefined, dequeue: [], wakeAt: null },
        { arrival: undefined, dequeue: ["b"], wakeAt: null },
      ],
      state: { active: ["b"], queue: [], started: [], debounce: null },
    },
  ])("$name", ({ control, inputs, steps, state }) => {
    const played = play(control, inputs);
    expect(played.steps).toEqual(steps);
    expect(played.state).toEqual(state);
  });

  it("a run id the key holds already (a scheduled tick delivered twice) changes nothing", () => {
    const control = flow({ concurrency: { limit: 1 } });
    const { state } = play(control, [arrive("a"), arrive("b")]);
    for (const runId of ["a", "b"]) {
      const decision = decideFlow(state, control, arrive(runId, 5));
      expect(decision.arrival).toEqual({ kind: "held" });
      expect(decision.state).toEqual(state);
    }
  });

  it("an end of a run the key does not hold changes nothing but may start what waits", () => {
    const control = flow({ concurrency: { limit: 1 } });
    const { state } = play(control, [arrive("a"), arrive("b")]);
    expect(decideFlow(state, control, ended("zzz")).dequeue).toEqual([]);
    expect(decideFlow(state, control, ended("a")).dequeue).toEqual(["b"]);
  });
});

describe("decideFlow: priority and fairness", () => {
  const ranked = (runId: string, priority: number, fairness = ""): FlowInput => ({
    type: "arrive",
    runId,
    now: 0,
    rank: { priority, fairness },
  });
  /** The order the queued runs start in as the running ones end one by one. */
  function startOrder(control: FlowControl, inputs: FlowInput[]): string[] {
    let { state } = play(control, inputs);
    const order: string[] = [];
    while (state.active.length > 0) {
      const decision = decideFlow(state, control, ended(state.active[0]!));
      order.push(...decision.dequeue);
      state = decision.state;
    }
    return order;
  }

  it.each([
    {
      name: "a higher priority starts first; arrival order within a priority",
      control: flow({ concurrency: { limit: 1 } }),
      inputs: [
        ranked("busy", 5),
        ranked("p5a", 5),
        ranked("p5b", 5),
        ranked("p9", 9),
        ranked("p1", 1),
        ranked("p9b", 9),
      ],
      order: ["p9", "p9b", "p5a", "p5b", "p1"],
    },
    {
      name: "round-robin across fairness values: tenant B's one run starts right after tenant A's first",
      control: flow({ concurrency: { limit: 1, fairness: (d) => d.tenant } }),
      inputs: [
        ranked("busy", 5, "A"),
        ranked("a1", 5, "A"),
        ranked("a2", 5, "A"),
        ranked("a3", 5, "A"),
        ranked("b1", 5, "B"),
      ],
      order: ["b1", "a1", "a2", "a3"],
    },
    {
      name: "three tenants take turns in the order they first queued",
      control: flow({ concurrency: { limit: 1, fairness: (d) => d.tenant } }),
      inputs: [
        ranked("busy", 5, "A"),
        ranked("a1", 5, "A"),
        ranked("a2", 5, "A"),
        ranked("b1", 5, "B"),
        ranked("b2", 5, "B"),
        ranked("c1", 5, "C"),
      ],
      order: ["b1", "c1", "a1", "b2", "a2"],
    },
    {
      name: "priority before fairness",
      control: flow({ concurrency: { limit: 1, fairness: (d) => d.tenant } }),
      inputs: [ranked("busy", 5, "A"), ranked("a1", 5, "A"), ranked("b1", 5, "B"), ranked("a9", 9, "A")],
      order: ["a9", "b1", "a1"],
    },
  ])("$name", ({ control, inputs, order }) => {
    expect(startOrder(control, inputs)).toEqual(order);
  });

  it("a run's rank is kept while it queues and forgotten when it starts or ends", () => {
    const control = flow({ concurrency: { limit: 1, fairness: (d) => d.tenant } });
    const { state } = play(control, [ranked("a", 5, "A"), ranked("b", 7, "B"), ranked("c", 5, "C")]);
    expect(state.ranks).toEqual({ b: { priority: 7, fairness: "B" }, c: { priority: 5, fairness: "C" } });
    const cancelled = decideFlow(state, control, ended("c")).state;
    expect(cancelled.ranks).toEqual({ b: { priority: 7, fairness: "B" } });
    const next = decideFlow(cancelled, control, ended("a")).state;
    expect(next).toMatchObject({ active: ["b"], queue: [], turn: "B" });
    expect(next.ranks).toBeUndefined();
  });

  it("a state stored before ranks existed reads every run at the default rank", () => {
    const control = flow({ concurrency: { limit: 1 } });
    const stored: FlowKeyState = { active: ["a"], queue: ["b", "c"], started: [], debounce: null };
    expect(decideFlow(stored, control, ended("a")).dequeue).toEqual(["b"]);
  });

  it("explainQueued counts the runs that start before it", () => {
    const control = flow({ concurrency: { limit: 1, fairness: (d) => d.tenant } });
    const { state } = play(control, [
      ranked("busy", 5, "A"),
      ranked("a1", 5, "A"),
      ranked("a2", 5, "A"),
      ranked("b1", 5, "B"),
    ]);
    expect(explainQueued(state, control, { key: "k", runId: "b1", now: 0 })?.ahead).toBe(0);
    expect(explainQueued(state, control, { key: "k", runId: "a2", now: 0 })?.ahead).toBe(2);
  });
});

describe("explainQueued", () => {
  it.each([
    {
      control: flow({ concurrency: { limit: 2 } }),
      inputs: [arrive("a"), arrive("b"), arrive("c"), arrive("d")],
      runId: "d",
      explained: { waitsFor: 'a concurrency slot: 2 of 2 runs of key "k" are active', ahead: 1 },
    },
    {
      control: flow({ throttle: { limit: 1, periodMS: 50 } }),
      inputs: [arrive("a", 0), arrive("b", 5)],
      runId: "b",
      explained: { waitsFor: 'the throttle: 1 runs of key "k" started within 50 ms', ahead: 0, notBefore: 50 },
    },
    {
      control: flow({ debounce: { periodMS: 1000 } }),
      inputs: [arrive("a", 0), arrive("b", 200)],
      runId: "a",
      explained: {
        waitsFor: 'a quiet period: it starts 1000 ms after the last start of key "k", with that start\'s data',
        notBefore: 1200,
      },
    },
  ])("$explained.waitsFor", ({ control, inputs, runId, explained }) => {
    const { state } = play(control, inputs);
    expect(explainQueued(state, control, { key: "k", runId, now: 10 })).toEqual(explained);
  });
});

describe("toFlowControl and flowKeyOf", () => {
  it.each([
    { options: { concurrency: { limit: 0 } }, error: /concurrency.limit must be an integer from 1 to 1000, got 0/ },
    { options: { concurrency: { limit: 1.5 } }, error: /concurrency.limit must be an integer/ },
    { options: { concurrency: 3 }, error: /concurrency must be an object/ },
    { options: { throttle: { limit: 1 } }, error: /throttle.periodMS must be a whole number of milliseconds/ },
    { options: { debounce: { periodMS: 86_400_001 } }, error: /debounce.periodMS .* from 1 to 86400000/ },
    { options: { concurrency: { limit: 1, key: "customer" } }, error: /concurrency.key must be a function/ },
  ])("refuses $options", ({ options, error }) => {
    expect(() => toFlowControl("w", options as never)).toThrow(error);
  });

  it("answers null without options, and the key all key functions agree on", () => {
    expect(toFlowControl("w", {})).toBeNull();
    const control = flow({
      concurrency: { limit: 1, key: (d: { c: string }) => d.c },
      throttle: { limit: 1, periodMS: 10, key: (d: { c: string }) => d.c },
    });
    expect(flowKeyOf("w", control, { c: "acme" })).toBe("acme");
    expect(flowKeyOf("w", flow({ concurrency: { limit: 1 } }), { c: "acme" })).toBe("");
  });

  it.each([
    { key: (d: { c: unknown }) => d.c, data: { c: 7 }, error: /must be a string of at most 256 characters/ },
    { key: () => "x".repeat(257), data: {}, error: /must be a string of at most 256 characters/ },
    { key: () => "a\nb", data: {}, error: /without control characters/ },
    {
      key: (d: { c: { id: string } }) => d.c.id,
      data: {},
      error: /key of workflow "w" threw for this start's data/,
    },
  ])("refuses the key for $data", ({ key, data, error }) => {
    expect(() => flowKeyOf("w", flow({ concurrency: { limit: 1, key: key as never } }), data)).toThrow(error);
  });

  it("refuses key functions that disagree", () => {
    const control = flow({
      concurrency: { limit: 1, key: () => "a" },
      debounce: { periodMS: 10, key: () => "b" },
    });
    expect(() => flowKeyOf("w", control, {})).toThrow(/keys of workflow "w" must agree for a start; got "a" and "b"/);
  });
});
