import { createActiveTime, type ActiveTime } from "./activeTime.ts";

/**
 * Cloudflare's meter for the actors of this isolate, as the runtime itself
 * counts it: the rows each SQL cursor read and wrote (`cursor.rowsRead`,
 * `cursor.rowsWritten`: index rows included, which is what the bill counts),
 * the alarms set (each a written row on the bill) and the alarms that ran.
 * From the first {@link resetStorageMeter} on, also the requests and the
 * active time Cloudflare bills as duration: every RPC call through an actor
 * client (`actorClient.ts`, which every call between the workflow actors and
 * from the project worker goes through; the actors have no `fetch` handler,
 * and each alarm run is a request too), and wall time per actor while one of
 * its entries (RPC methods, `alarm`; `actorEntryMeter.ts`) or a run execution
 * is under way (`activeTime.ts`). That time is read on workerd's clock, which
 * moves with I/O only: waits on storage, timers and other actors are
 * measured, a synchronous stretch of CPU reads as 0 ms; time an actor stays
 * in memory unable to hibernate after its work ended is not measured. Before
 * the first reset none of this is counted, so production pays one boolean
 * test per call.
 * The SQL of the workflow actors (run actors, run index, flow keys) goes
 * through `durableObjectSql` and their alarms through {@link setAlarmMetered};
 * the rate counter and the chat gateway relay use their storage directly and
 * are not counted yet. `npm run bench` reads it
 * (section M, through the bench project's routes); it costs a few additions
 * per statement.
 */
export interface StorageMeterReading {
  rowsRead: number;
  rowsWritten: number;
  alarmsSet: number;
  alarmRuns: number;
  statements: number;
  /** RPC calls into the actors, each one request on the bill. */
  rpcCalls: number;
  /** Wall ms summed over actors while each was active (see above). */
  activeMS: number;
  /** Entries of the project worker's fetch handler that its code reported ({@link meterWorkerInvocation}). */
  workerInvocations: number;
}

const reading: Omit<StorageMeterReading, "activeMS"> = {
  rowsRead: 0,
  rowsWritten: 0,
  alarmsSet: 0,
  alarmRuns: 0,
  statements: 0,
  rpcCalls: 0,
  workerInvocations: 0,
};
/** Null until the first reset: requests and active time are counted only while a bench or test asks. */
let activeTime: ActiveTime | null = null;

/** Adds what one SQL cursor read and wrote (once it is consumed). */
export function meterCursor(cursor: { rowsRead: number; rowsWritten: number }): void {
  reading.rowsRead += cursor.rowsRead;
  reading.rowsWritten += cursor.rowsWritten;
  reading.statements++;
}

/** An actor's `storage.sql`, as far as metering needs it (this module is also read by Node's tools). */
interface MeteredSql {
  exec(query: string, ...params: unknown[]): { toArray(): unknown[]; rowsRead: number; rowsWritten: number };
}

/** Runs one statement on an actor's SQLite and meters its cursor: the one way actors' SQL is executed. */
export function execMetered(db: MeteredSql, query: string, ...params: unknown[]): unknown[] {
  const cursor = db.exec(query, ...params);
  const rows = cursor.toArray();
  meterCursor(cursor);
  return rows;
}

/** Sets the actor's alarm, counted as Cloudflare bills it. */
export function setAlarmMetered(storage: { setAlarm(at: number): Promise<void> }, at: number): Promise<void> {
  reading.alarmsSet++;
  return storage.setAlarm(at);
}

/** An actor's `alarm()` began. */
export function meterAlarmRun(): void {
  reading.alarmRuns++;
}

/** Whether RPC calls and active time are being counted (after {@link resetStorageMeter}). */
export function meteringRequests(): boolean {
  return activeTime !== null;
}

/** One RPC call reached an actor. */
export function meterRpcCall(): void {
  reading.rpcCalls++;
}

/** Work of the actor `actor` (its id; an entry's answer, a run's execution): active until it settles. */
export function meterActiveWork(actor: { toString(): string }, work: Promise<unknown>): void {
  if (!activeTime) return;
  const end = activeTime.begin(actor.toString());
  work.then(end, end);
}

/** The project worker's fetch handler was entered. */
export function meterWorkerInvocation(): void {
  reading.workerInvocations++;
}

export function readStorageMeter(): StorageMeterReading {
  return { ...reading, activeMS: activeTime?.totalMS() ?? 0 };
}

/** Zeroes the meter and counts requests and active time from now on, on `now` (the runtime's clock). */
export function resetStorageMeter(now: () => number = Date.now): void {
  reading.rowsRead = 0;
  reading.rowsWritten = 0;
  reading.alarmsSet = 0;
  reading.alarmRuns = 0;
  reading.statements = 0;
  reading.rpcCalls = 0;
  reading.workerInvocations = 0;
  activeTime = createActiveTime(now);
}
